"""What every part of the syntax package shares: `Scope` (a definition and its lines), `Names`
(what a file's lines define and use), the languages known by file extension (`language_of`),
and the switch that turns tree-sitter off (`DDCHANGE_NO_SYNTAX`).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import PurePosixPath

NO_SYNTAX_ENV = "DDCHANGE_NO_SYNTAX"


@dataclass(frozen=True, kw_only=True)
class Scope:
    """One definition that spans lines: see the module docstring for the `kind` vocabulary."""

    kind: str
    name: str  # qualified where the language nests: "Parser.parse", "ns::Widget::draw"
    start: int  # 1-based first line (decorators, templates and attributes included)
    end: int  # 1-based last line, inclusive


@dataclass(frozen=True)
class Names:
    """Names that some lines define and names they use.

    `defined`: functions, methods, classes, structs, enums and their constants, typedefs, macros,
    fields, module-level (global) variables and constants, and imported names. Parameters and
    local variables are not definitions. `used`: identifiers the lines refer to (calls, references,
    type names, member names after `.`/`->`), minus keywords and builtin types; parameters and
    locals where they are bound do not count. A definition's own name is not a use of it; it is
    in `used` too only when the lines refer to it again (a recursive call), with one exception:
    an import both defines its local name and uses the imported one (`from m import a` defines
    and uses `a`; `from m import a as b` defines `b` and uses `m` and `a`).

    Python names are resolved by scope, as the interpreter does (both modes):
    - `defined`: a module-level binding (def, class, assignment, annotated assignment, for/with/
      except target, `type X = ...`, an import's bound name) defines its plain name, and so does
      an assignment in a function to a name it declares `global`. A binding in the body of class
      C (a method, a class attribute, a nested class) defines "C.name", and `self.x = ...` in a
      method of C (self: the method's first parameter, unless it is a staticmethod) defines
      "C.x"; nested classes qualify fully ("Outer.Inner.name"); classes inside functions define
      nothing. Anything else bound in a function (parameters, locals, loop, with, except,
      comprehension and lambda targets) defines nothing. `from __future__` defines nothing.
    - `used`: a bare name read (decorators, base classes, annotations and default values
      included) is a use of the plain name, unless it is bound in the enclosing function
      (anywhere in it, not declared global/nonlocal) or is a builtin the module does not bind;
      read in a class body, a name the class binds is "C.name". `self.m`/`cls.m` in a method of
      C uses "C.m" and "B.m" for C's bases B (followed through bases of this file); `C.m` for a
      class C uses "C" and "C.m" (and its bases' "B.m"); `mod.f` with mod bound by an import uses
      "mod" and "f", and also "mod.f" when `from ... import mod` bound it (it may be a class).
      `x.attr` of any other object uses x (unless local) and nothing for attr. A keyword
      argument's name (`f(timeout=5)`) is no use. An import uses every name it spells.
    - `.pyi` stubs, and files of no known language (docs, configuration), give nothing.
    Without a grammar the scan blanks strings, so it misses the names inside f-strings.
    """

    defined: frozenset[str]
    used: frozenset[str]


# --- public API -------------------------------------------------------------------------------

_SUFFIXES = {
    ".py": "python",
    ".pyi": "python",
    ".c": "c",
    ".h": "c",  # C++ headers often use .h too; the C grammar still finds their functions
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}


# Upper-case .C/.H is the traditional Unix spelling of C++ sources, so it is matched before
# lower-casing the suffix.
_CASED_SUFFIXES = {".C": "cpp", ".H": "cpp"}


@functools.lru_cache(maxsize=4096)
def language_of(path: str) -> str | None:
    """The language of `path` by its extension, or None when ddchange does not know it (asked
    for every change of a file, many times: remembered)."""
    suffix = PurePosixPath(path).suffix
    return _CASED_SUFFIXES.get(suffix) or _SUFFIXES.get(suffix.lower())


def syntax_disabled() -> bool:
    """Whether the user switched tree-sitter off (DDCHANGE_NO_SYNTAX set, and not to 0)."""
    return os.environ.get(NO_SYNTAX_ENV, "") not in ("", "0")
