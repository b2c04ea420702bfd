"""The analysis of names: which change units add or remove definitions and uses of which
names, files included, read from the syntax of each changed file (syntax/). Plain data, so
that another process can make it while the pre-flight runs (session.analysis_aside); the
dependencies between units follow from it (`Analysis.needs`, read by grouping.Hierarchy).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict

from ddchange.diff.hunks import Diff, FileDiff, Hunk
from ddchange.diff.linechanges import changed_lines
from ddchange.hierarchy import syntax


class Analysis:
    """The analysis of names: which units add or remove definitions and uses of which names.
    Plain data, so that another process can make it (see `Hierarchy`)."""

    def __init__(self, diff: Diff) -> None:
        self.added_defs: dict[str, set[str]] = defaultdict(set)
        self.removed_defs: dict[str, set[str]] = defaultdict(set)
        self.added_uses: dict[str, set[str]] = defaultdict(set)
        self.removed_uses: dict[str, set[str]] = defaultdict(set)
        # Units that add a binding of a plain name in any form: a definition, an import, a
        # member of a class ("C.m" under "m"), as a failed build names them.
        self.added_bindings: dict[str, set[str]] = defaultdict(set)
        # Functions and methods by name, in languages whose compiler checks calls: a change to
        # a function's header is a new signature, which its callers must follow to build,
        # unlike a new value for a variable (or a Python default argument).
        self.functions: set[str] = set()
        for unit in diff.hunks:
            self._read(diff.files[unit.file], unit)
            self._read_file_names(diff.files[unit.file], unit)
        for file in (f for f in diff.files if syntax.language_of(f.path) in _CHECKED_CALLS):
            for content in (file.old_content, file.new_content):
                found = syntax.scopes(file.path, content) if content is not None else None
                self.functions |= {s.name for s in found or () if s.kind in _CALLABLE}

    def _read(self, file: FileDiff, unit: Hunk) -> None:
        removed, added = _lines_of(file, unit)
        for content, path, lines, defs, uses in (
            (file.new_content, file.path, added, self.added_defs, self.added_uses),
            (file.old_content, file.origin, removed, self.removed_defs, self.removed_uses),
        ):
            if content is None or not lines:
                continue
            found = syntax.names(path, content, lines)
            # A name the same lines define and use is an import (`from m import a`): a binding
            # of something defined elsewhere, seen only in its own file. It is kept under a
            # file-local key that only uses in the same file also carry.
            for name in found.defined:
                defs[_local(path, name) if name in found.used else name].add(unit.id)
                if defs is self.added_defs:  # what a missing name may point to (`learn`)
                    self.added_bindings[name.rsplit(".", 1)[-1]].add(unit.id)
            for name in found.used:
                uses[name].add(unit.id)
                uses[_local(path, name)].add(unit.id)

    def _read_file_names(self, file: FileDiff, unit: Hunk) -> None:
        """Files are names too: an added source file defines its name and stem (version.h,
        version), which an `#include "version.h"`, a Makefile's `version.o` or a Python
        `import version` use; any other added file only its whole name (data.csv); a deleted
        file's names are removed definitions. Only code and build files use file names:
        docs and configuration never do."""
        if unit.kind in ("add", "delete"):
            defs = self.added_defs if unit.kind == "add" else self.removed_defs
            names = file_names(file.path) if _is_code(file.path) else {_base(file.path)}
            for name in names:
                defs[name].add(unit.id)
        if not (_is_code(file.path) or _is_build(file.path)):
            return
        removed, added = _lines_of(file, unit)
        for content, lines, uses in (
            (file.new_content, added, self.added_uses),
            (file.old_content, removed, self.removed_uses),
        ):
            for line in _texts(content, lines) if unit.kind not in ("add", "delete") else ():
                for token in _FILE_TOKEN.findall(line):
                    for name in file_names(token):
                        uses[name].add(unit.id)

    def needs(self) -> dict[str, set[str]]:
        needs: dict[str, set[str]] = defaultdict(set)
        for name, users in self.added_uses.items():
            for user in users:
                needs[user] |= self.added_defs.get(name, set()) - {user}
        for name, definers in self.removed_defs.items():
            added = self.added_defs.get(name, set())
            function = name in self.functions
            # A value rewritten in place (removed and added by the same unit: `SEP = ";"`)
            # leaves the name defined: its old uses may stay. A function's header rewritten
            # in place is a new signature: its old calls must go with it.
            for definer in definers if function else definers - added:
                needs[definer] |= self.removed_uses.get(name, set()) - {definer}
            # A definition rewritten or moved (removed here, added there), or a function's
            # declaration and definition rewritten together: without all of them the name is
            # undefined, defined twice, or declared with two types.
            rewritten = definers | added
            if len(rewritten) > len(definers) or (function and len(rewritten) > 1):
                for unit in rewritten:
                    needs[unit] |= rewritten - {unit}
        return {unit: needed for unit, needed in needs.items() if needed}

    def users(self, name: str) -> set[str]:
        """Units whose new lines mention `name`."""
        return self.added_uses.get(name, set()) | self.added_defs.get(name, set())

    def providers(self, name: str) -> set[str]:
        """Units that add a binding of `name` (a definition, an import, a member), or change
        its uses (arity errors)."""
        return (
            self.added_defs.get(name, set())
            | self.added_bindings.get(name, set())
            | self.added_uses.get(name, set())
        )


def _local(path: str, name: str) -> str:
    """The key of `name` as bound in the file `path` only (see Analysis._read)."""
    return f"{path}\0{name}"


def _lines_of(file: FileDiff, unit: Hunk) -> tuple[list[int], list[int]]:
    """Old lines removed and new lines added by any unit; a whole added or deleted file counts
    all its lines."""
    if unit.kind == "add" and file.new_content is not None:
        return [], list(range(1, file.new_content.count(b"\n") + 2))
    if unit.kind == "delete" and file.old_content is not None:
        return list(range(1, file.old_content.count(b"\n") + 2)), []
    return changed_lines(unit)


_CALLABLE = frozenset({"function", "method"})
_CHECKED_CALLS = frozenset({"c", "cpp", "java", "go", "rust", "typescript", "tsx"})

# A file name in a line of code: a word with an extension (version.h, src/version.o, a.py).
_FILE_TOKEN = re.compile(r"[\w./+-]*\w\.[A-Za-z]\w*")


def file_names(path: str) -> set[str]:
    """The names under which code refers to a file: its base name and its stem."""
    base = _base(path)
    return {base, base.split(".", 1)[0]} - {""}


def _base(path: str) -> str:
    return os.path.basename(path.replace("\\", "/"))


# Build descriptions that name source and object files (a Makefile's `version.o`).
_BUILD_FILES = re.compile(
    r"(?:GNU)?[Mm]akefile(?:\.\w+)?|.*\.(?:mk|mak|cmake)|CMakeLists\.txt|meson\.build|"
    r"(?:SConstruct|SConscript|BUILD|BUILD\.bazel|setup\.py)"
)


def _is_code(path: str) -> bool:
    """A source file in a language ddchange reads (not a .pyi stub: stubs define no code)."""
    return syntax.language_of(path) is not None and not path.endswith(".pyi")


def _is_build(path: str) -> bool:
    return _BUILD_FILES.fullmatch(_base(path)) is not None


def _texts(content: bytes | None, lines: list[int]) -> list[str]:
    """The text of the given 1-based lines of `content`."""
    if content is None or not lines:
        return []
    split = content.split(b"\n")
    return [split[n - 1].decode("utf-8", "replace") for n in lines if 0 < n <= len(split)]
