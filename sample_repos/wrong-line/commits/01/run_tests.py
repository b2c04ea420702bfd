"""Run the unit tests with `git bisect run` exit codes.

0: all tests pass. 1: some test failed an assertion. 125: some test crashed (an import
error, a missing name, ...), which says nothing about the bug we are looking for.
"""

import sys
import unittest

suite = unittest.defaultTestLoader.discover("tests")
result = unittest.TextTestRunner(verbosity=0).run(suite)
if result.errors:
    sys.exit(125)
sys.exit(0 if result.wasSuccessful() else 1)
