#!/bin/sh
# Tag a release: tools/release.sh 2.1
set -eu
version=$1
sed -i "s/^__version__ = .*/__version__ = \"$version\"/" csvreport/__init__.py
git commit -am "Release $version"
git tag "v$version"
