"""What a failed build or test says is missing: the names its output gives (undefined
reference, undeclared, NameError, ImportError, a missing file ...), read from each
UNRESOLVED run's output and kept with its record, so that the search learns the needs they
reveal (grouping.Hierarchy.learn: Zeller's failure resolution loop)."""

from __future__ import annotations

import re

from ddchange.hierarchy.names import file_names

# What compilers, linkers and interpreters say when a name is missing (C, C++, Python, Java,
# Go, Rust, JavaScript). The name is the first group of the first pattern that matches.
_MISSING = re.compile(
    r"undefined reference to [`']([A-Za-z_]\w*)'"
    r"|[‘'`]([A-Za-z_]\w*)[’'] undeclared"
    r"|implicit declaration of function [‘'`]([A-Za-z_]\w*)[’']"
    r"|unknown type name [‘'`]([A-Za-z_]\w*)[’']"
    r"|(?:too few|too many) arguments to function [‘'`](?:\w+\s+\**)?([A-Za-z_]\w*)"
    r"|conflicting types for [‘'`]([A-Za-z_]\w*)[’']"
    r"|[‘'`]([A-Za-z_]\w*)[’'] was not declared in this scope"
    # Python's messages, also where a test printed only repr(error): NameError("name ...").
    r"|name '([A-Za-z_]\w*)' is not defined"
    r"|cannot import name '([A-Za-z_]\w*)'"
    r"|has no attribute '([A-Za-z_]\w*)'"
    r"|cannot find symbol\s+symbol:\s+\w+\s+([A-Za-z_]\w*)"
    r"|undefined: ([A-Za-z_]\w*)"
    r"|cannot find (?:value|function|type) `([A-Za-z_]\w*)`"
    r"|ReferenceError: ([A-Za-z_]\w*) is not defined"
)


# ... and when a file is missing: the file's name and stem are the missing names.
_MISSING_FILE = re.compile(
    r"fatal error: ([\w./+-]+): No such file or directory"
    r"|No rule to make target [`']([^']+)'"
    r"|No module named '([\w.]+)'"
    r"|Cannot find module '([^']+)'"
)


def missing_names(output: str) -> set[str]:
    """The names a failed build or test says are missing (identifiers and files)."""
    names = {next(g for g in match.groups() if g) for match in _MISSING.finditer(output)}
    for match in _MISSING_FILE.finditer(output):
        path, target, module, js_module = match.groups()
        if module:  # a.b.c is the file a/b/c.py
            names |= file_names(module.replace(".", "/"))
        names |= file_names(path or target or js_module or "")
    return names
