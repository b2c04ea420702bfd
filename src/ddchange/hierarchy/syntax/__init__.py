"""Syntax facts about one file: where its definitions are, and which names its lines define and use.

The package owns everything ddchange knows about programming languages; this module is its
public face. Grouping asks `scopes` / `enclosing` /
`split_points` to bundle changes by the function or class they touch and to cut a hunk that spans
several functions at their boundaries; dependency analysis asks `names` which names a change
defines and which it uses, so that a call travels with the definition it needs and a rename's
definition travels with its call sites.

Key idea: a real parser when we have one, a cheap token scan when we do not. Each language's
tree-sitter grammar is a per-language wheel (Python, C and C++ are dependencies, the others an
optional extra; never tree-sitter-language-pack, which downloads grammars at run time and fails
offline), imported lazily; a missing or broken wheel
degrades that language alone. `DDCHANGE_NO_SYNTAX=1` (read at every call) turns tree-sitter off
entirely. Without a grammar `scopes` answers None, so that callers fall back to git's hunk headers,
and `names` answers from regular expressions. Python names are resolved by scope in both modes
(python.py).

Where things are: base.py (the shared types, languages by extension), tree.py (tree-sitter
plumbing), grammars.py (the registry of grammars and loading them), scopes.py (definitions from
the tree), binding.py with c.py, javascript.py, go.py, rust.py and java.py (names from the
tree), fallback.py and fallback_rules.py (the token scan), words.py (reserved words), python.py,
python_tree.py and python_scan.py (Python, resolved by scope). A new language: its binders in a
module of its own and an entry in grammars.py, and/or its rules in fallback_rules.py.

The package is pure: a path (only its extension is looked at) and content bytes in, facts out. No
git, no subprocess, no file reads. Broken or half-written code never raises: tree-sitter recovers
from syntax errors, and the scan is only regular expressions.

Scope kinds, a fixed vocabulary:
    function   free function (also a named arrow function or function expression in JS/TS)
    method     function defined in a class-like body, a Go method, a C++ out-of-line `A::f`
    class      class (Python, C++, JS/TS, Java, also Java records)
    struct     C/C++/Rust struct, Go struct type
    union      C/C++/Rust union
    enum       enum
    interface  Java/TS/Go interface, Java annotation type
    trait      Rust trait
    impl       Rust impl block (named after the type it implements)
    namespace  C++ namespace, TS namespace/module, Rust mod
    macro      C/C++ #define, Rust macro_rules!
    type       Go named type that is no struct or interface, TS type alias
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from ddchange.hierarchy.syntax.base import (
    NO_SYNTAX_ENV,
    Names,
    Scope,
    language_of,
    syntax_disabled,
)
from ddchange.hierarchy.syntax.binding import tree_names
from ddchange.hierarchy.syntax.fallback_rules import scan_names
from ddchange.hierarchy.syntax.grammars import GRAMMARS, _parse, usable_language
from ddchange.hierarchy.syntax.python_scan import py_names
from ddchange.hierarchy.syntax.scopes import tree_scopes

__all__ = [
    "NO_SYNTAX_ENV",
    "Names",
    "Scope",
    "enclosing",
    "has_grammar",
    "language_of",
    "names",
    "scopes",
    "split_points",
    "syntax_disabled",
]


def has_grammar(path: str) -> bool:
    """Whether tree-sitter can parse `path` right now (wheel installed and not switched off)."""
    return usable_language(path) is not None


def scopes(path: str, content: bytes) -> tuple[Scope, ...] | None:
    """Every definition in the file, nested ones too, sorted by start line (outer first).

    None when no grammar is usable for this file: the caller falls back to git's hunk headers.
    """
    lang = usable_language(path)
    return None if lang is None else tree_scopes(lang, content)


def enclosing(found: Sequence[Scope], first: int, last: int) -> Scope | None:
    """The innermost scope that contains all of lines first..last; None for top-level code.

    An empty range (last < first, as for a pure deletion) stands for the line `first`.
    """
    last = max(first, last)
    containing = [s for s in found if s.start <= first and last <= s.end]
    # Scopes nest, so the innermost one starts last; of two starting together the shorter is inner.
    return max(containing, key=lambda s: (s.start, -s.end), default=None)


def split_points(found: Sequence[Scope], first: int, last: int) -> list[int]:
    """Where to cut lines first..last so that no piece straddles a scope boundary.

    Let E be `enclosing(found, first, last)` (None: the whole file) and let the children be the
    outermost scopes strictly inside E that overlap the range. Each returned line (in
    first+1..last, ascending) starts a new piece; every piece then lies either within one child
    or in none of them (E's own lines: headers, the gaps between children, a closing brace).
    A hunk spanning the end of `f`, a blank line and the start of `g` becomes three pieces: f's
    lines, the blank line, g's lines. Cuts happen at the coarsest level only: a piece inside one
    method may still contain a nested function; ask again with that piece to cut further.
    """
    if last <= first:
        return []
    outer = enclosing(found, first, last)
    inside = [s for s in found if s.start <= last and first <= s.end and _strictly_inside(s, outer)]
    children = [s for s in inside if not any(_strictly_inside(s, o) for o in inside)]
    cuts = {s.start for s in children} | {s.end + 1 for s in children}
    return sorted(line for line in cuts if first < line <= last)


def names(path: str, content: bytes, lines: Iterable[int]) -> Names:
    """The names defined and used on the given 1-based lines of `content` (see `Names`).

    With a grammar a definition counts when its name lies on one of the lines; without one, a
    token scan with per-language regular expressions answers (see `_FALLBACKS`). Python is
    resolved by scope over the whole file in both modes (see `py_names`); files of no known
    language and Python stubs name nothing.
    """
    rows = frozenset(line - 1 for line in lines if line >= 1)
    language = language_of(path)
    # A stub only restates what its module defines, and docs and configuration (every file of
    # no known language) mention names without defining or using them.
    if not rows or language is None or PurePosixPath(path).suffix.lower() == ".pyi":
        return Names(frozenset(), frozenset())
    if language == "python":
        return py_names(path, content, rows)
    lang = usable_language(path)
    tree = None if lang is None else _parse(lang, content)
    if lang is not None and tree is not None:
        return tree_names(GRAMMARS[lang], tree, rows)
    return scan_names(language, content, rows)


def _strictly_inside(inner: Scope, outer: Scope | None) -> bool:
    if outer is None:
        return True
    same = (inner.start, inner.end) == (outer.start, outer.end)
    return outer.start <= inner.start and inner.end <= outer.end and not same
