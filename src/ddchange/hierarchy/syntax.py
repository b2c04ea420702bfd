"""Syntax facts about one file: where its definitions are, and which names its lines define and use.

Owns everything ddchange knows about programming languages. Grouping asks `scopes` / `enclosing` /
`split_points` to bundle changes by the function or class they touch and to cut a hunk that spans
several functions at their boundaries; dependency analysis asks `names` which names a change
defines and which it uses, so that a call travels with the definition it needs and a rename's
definition travels with its call sites.

Key idea: a real parser when we have one, a cheap token scan when we do not. Each language's
tree-sitter grammar is an optional per-language wheel (never tree-sitter-language-pack, which
downloads grammars at run time and fails offline), imported lazily; a missing or broken wheel
degrades that language alone. `DDCHANGE_NO_SYNTAX=1` (read at every call) turns tree-sitter off
entirely. Without a grammar `scopes` answers None, so that callers fall back to git's hunk headers,
and `names` answers from regular expressions. Python names are resolved by scope in both modes
(see "Python: names resolved by scope" below).

The module is pure: a path (only its extension is looked at) and content bytes in, facts out. No
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

import bisect
import builtins
import dataclasses
import functools
import importlib
import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePosixPath
from typing import Any, Protocol

NO_SYNTAX_ENV = "DDCHANGE_NO_SYNTAX"


@dataclass(frozen=True)
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


def has_grammar(path: str) -> bool:
    """Whether tree-sitter can parse `path` right now (wheel installed and not switched off)."""
    return _usable_language(path) is not None


def scopes(path: str, content: bytes) -> list[Scope] | None:
    """Every definition in the file, nested ones too, sorted by start line (outer first).

    None when no grammar is usable for this file: the caller falls back to git's hunk headers.
    """
    lang = _usable_language(path)
    tree = None if lang is None else _parse(lang, content)
    if lang is None or tree is None:
        return None
    return _tree_scopes(_GRAMMARS[lang], tree)


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
    resolved by scope over the whole file in both modes (see `_py_names`); files of no known
    language and Python stubs name nothing.
    """
    rows = frozenset(line - 1 for line in lines if line >= 1)
    language = language_of(path)
    # A stub only restates what its module defines, and docs and configuration (every file of
    # no known language) mention names without defining or using them.
    if not rows or language is None or PurePosixPath(path).suffix.lower() == ".pyi":
        return Names(frozenset(), frozenset())
    if language == "python":
        return _py_names(path, content, rows)
    lang = _usable_language(path)
    tree = None if lang is None else _parse(lang, content)
    if lang is not None and tree is not None:
        return _tree_names(_GRAMMARS[lang], tree, rows)
    return _scan_names(language, content, rows)


def _strictly_inside(inner: Scope, outer: Scope | None) -> bool:
    if outer is None:
        return True
    same = (inner.start, inner.end) == (outer.start, outer.end)
    return outer.start <= inner.start and inner.end <= outer.end and not same


# --- tree-sitter plumbing ---------------------------------------------------------------------
# The node interface we rely on, spelled out so that mypy checks this module whether or not the
# optional tree_sitter package is installed (CI installs only the test extra).


class _Point(Protocol):
    @property
    def row(self) -> int: ...
    @property
    def column(self) -> int: ...


class _Node(Protocol):
    @property
    def type(self) -> str: ...
    @property
    def start_byte(self) -> int: ...
    @property
    def end_byte(self) -> int: ...
    @property
    def start_point(self) -> _Point: ...
    @property
    def end_point(self) -> _Point: ...
    @property
    def children(self) -> Sequence[_Node]: ...
    @property
    def named_children(self) -> Sequence[_Node]: ...
    @property
    def is_named(self) -> bool: ...
    @property
    def parent(self) -> _Node | None: ...
    @property
    def prev_named_sibling(self) -> _Node | None: ...
    @property
    def text(self) -> bytes | None: ...
    def child_by_field_name(self, name: str, /) -> _Node | None: ...
    def children_by_field_name(self, name: str, /) -> Sequence[_Node]: ...
    def field_name_for_child(self, child_index: int, /) -> str | None: ...


def _usable_language(path: str) -> str | None:
    lang = language_of(path)
    if lang is None or syntax_disabled() or _parser(lang) is None:
        return None
    return lang


@functools.cache
def _parser(lang: str) -> Any:
    """A tree-sitter parser for `lang`, or None when its wheel is missing or does not load."""
    module, factory = _GRAMMARS[lang].wheel
    try:
        # Imported by name, like the grammars, so that mypy checks this module the same way
        # whether or not the optional package is installed.
        binding = importlib.import_module("tree_sitter")
        grammar = getattr(importlib.import_module(module), factory)()
        return binding.Parser(binding.Language(grammar))
    # Any failure to load (wheel missing, ABI mismatch with the installed tree_sitter) means the
    # same thing: this language uses the fallback. That is the documented contract.
    except Exception:
        return None


@functools.lru_cache(maxsize=16)
def _parse(lang: str, content: bytes) -> _Node | None:
    """The root node of `content`. Cached: grouping asks about the same file hunk after hunk."""
    try:
        root: _Node = _parser(lang).parse(content).root_node
    # tree-sitter recovers from syntax errors by itself; anything raised here is an internal
    # failure of the C library, and the caller has a fallback for exactly that case.
    except Exception:
        return None
    return root


def _text(node: _Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _first_row(node: _Node) -> int:
    return node.start_point.row


def _last_row(node: _Node) -> int:
    # A node that ends with its line's newline ends at column 0 of the next row.
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def _field(node: _Node | None, name: str) -> _Node | None:
    return None if node is None else node.child_by_field_name(name)


def _fields(node: _Node) -> Iterator[tuple[str | None, _Node]]:
    for index, child in enumerate(node.children):
        yield node.field_name_for_child(index), child


def _has_ancestor(node: _Node, types: frozenset[str]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in types:
            return True
        parent = parent.parent
    return False


# --- scopes from the tree ---------------------------------------------------------------------

_ScopeName = Callable[[_Node], "tuple[str, str] | None"]  # node -> (name, kind override or "")


@dataclass(frozen=True)
class _Grammar:
    """What the tree code needs to know about one language."""

    wheel: tuple[str, str]  # (module, function returning the language)
    separator: str  # joins qualified scope names
    scope_kinds: Mapping[str, str]  # definition node type -> scope kind
    identifiers: frozenset[str]  # leaf node types that name something
    binders: Mapping[str, _Binder]  # node type -> the names it binds (see _Bind)
    ignored: frozenset[str]  # keywords and builtin types: never a use
    wrappers: frozenset[str] = frozenset()  # parents whose lines belong to the definition
    leading: frozenset[str] = frozenset()  # preceding siblings that belong to the definition


# A function nested directly in one of these is a method.
_CLASS_LIKE = frozenset({"class", "struct", "union", "enum", "interface", "trait", "impl"})


def _tree_scopes(grammar: _Grammar, root: _Node) -> list[Scope]:
    found: list[Scope] = []
    stack: list[tuple[_Node, Scope | None]] = [(root, None)]
    while stack:
        node, outer = stack.pop()
        scope = _scope_of(grammar, node, outer)
        if scope is not None:
            found.append(scope)
        stack.extend((child, scope or outer) for child in node.named_children)
    return sorted(found, key=lambda s: (s.start, -s.end))


def _scope_of(grammar: _Grammar, node: _Node, outer: Scope | None) -> Scope | None:
    kind = grammar.scope_kinds.get(node.type)
    named = None if kind is None else _SCOPE_NAMES.get(node.type, _plain_name)(node)
    if kind is None or named is None or not named[0]:
        return None  # no definition, or an anonymous one (lambda, `namespace {`, computed name)
    name, override = named
    kind = override or kind
    if kind == "function" and outer is not None and outer.kind in _CLASS_LIKE:
        kind = "method"
    if outer is not None:
        name = f"{outer.name}{grammar.separator}{name}"
    return Scope(kind, name, _scope_start(grammar, node) + 1, _last_row(node) + 1)


def _scope_start(grammar: _Grammar, node: _Node) -> int:
    """The first row of a definition, counting its decorators, template head and attributes."""
    while node.parent is not None and node.parent.type in grammar.wrappers:
        node = node.parent
    start = _first_row(node)
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type in grammar.leading and _last_row(sibling) < start:
        start = _first_row(sibling)
        sibling = sibling.prev_named_sibling
    return start


def _bare(text: str) -> str:
    """A type or scope name without whitespace and template/generic arguments."""
    text = re.sub(r"\s+", "", text)
    if "operator" in text:
        return text  # `operator<`, `operator[]`: the brackets are the name
    while True:
        shorter = re.sub(r"<[^<>]*>|\[[^\[\]]*\]", "", text)
        if shorter == text:
            return text.lstrip("*&")
        text = shorter


def _plain_name(node: _Node) -> tuple[str, str] | None:
    name = _field(node, "name")
    return None if name is None else (_bare(_text(name)), "")


def _c_function_name(node: _Node) -> tuple[str, str] | None:
    """`int *Widget<T>::draw(...)` -> ("Widget::draw", "method"): the declarator, unwrapped."""
    declarator = _field(node, "declarator")
    while declarator is not None and declarator.type not in _C_NAME_NODES:
        declarator = _field(declarator, "declarator") or next(iter(declarator.named_children), None)
    if declarator is None:
        return None
    qualified = declarator.type == "qualified_identifier"
    return _bare(_text(declarator)), "method" if qualified else ""


_C_NAME_NODES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "template_function",
        "type_identifier",
    }
)


def _c_record_name(node: _Node) -> tuple[str, str] | None:
    """A struct/union/enum/class with a body; an anonymous one takes its typedef's name."""
    if _field(node, "body") is None:
        return None  # a use such as `struct point *p`, or a forward declaration
    named = _plain_name(node)
    parent = node.parent
    if named is None and parent is not None and parent.type == "type_definition":
        alias = _field(parent, "declarator")
        declared = _c_declared(alias)
        return None if declared is None else (_text(declared), "")
    return named


def _named_with_body(node: _Node) -> tuple[str, str] | None:
    """Declarations without a body (`mod foo;`, abstract methods) span no lines worth grouping."""
    return None if _field(node, "body") is None else _plain_name(node)


def _go_method_name(node: _Node) -> tuple[str, str] | None:
    """`func (p *Point) Move()` -> ("Point.Move", "")."""
    name = _field(node, "name")
    receiver = _field(node, "receiver")
    params = [] if receiver is None else list(receiver.named_children)
    kind = _field(params[0], "type") if params else None
    if name is None:
        return None
    return (_text(name) if kind is None else f"{_bare(_text(kind))}.{_text(name)}"), ""


def _go_type_name(node: _Node) -> tuple[str, str] | None:
    name = _field(node, "name")
    body = _field(node, "type")
    kind = {"struct_type": "struct", "interface_type": "interface"}.get(
        "" if body is None else body.type, "type"
    )
    return None if name is None else (_text(name), kind)


def _rust_impl_name(node: _Node) -> tuple[str, str] | None:
    implemented = _field(node, "type")
    return None if implemented is None else (_bare(_text(implemented)), "")


_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)


def _js_bound_function(node: _Node) -> tuple[str, str] | None:
    """`const f = () => {...}` or a class field `handler = function () {...}`."""
    value = _field(node, "value")
    name = _field(node, "name") or _field(node, "property")
    if value is None or name is None or name.type not in _JS_NAME_NODES:
        return None
    if value.type in ("class", "class_expression"):
        return _text(name), "class"
    return (_text(name), "") if value.type in _FUNCTION_VALUES else None


_JS_NAME_NODES = frozenset({"identifier", "property_identifier", "private_property_identifier"})

_SCOPE_NAMES: dict[str, _ScopeName] = {
    "function_definition": lambda n: (
        _c_function_name(n) if _field(n, "declarator") is not None else _plain_name(n)
    ),
    "struct_specifier": _c_record_name,
    "union_specifier": _c_record_name,
    "enum_specifier": _c_record_name,
    "class_specifier": _c_record_name,
    "method_declaration": lambda n: (
        _go_method_name(n) if _field(n, "receiver") is not None else _named_with_body(n)
    ),
    "type_spec": _go_type_name,
    "impl_item": _rust_impl_name,
    "mod_item": _named_with_body,
    "variable_declarator": _js_bound_function,
    "field_definition": _js_bound_function,
    "public_field_definition": _js_bound_function,
}


# --- names from the tree ----------------------------------------------------------------------


class _Role(Enum):
    DEFINE = "define"  # a definition's name: defined, not a use
    DEFINE_AND_USE = "define and use"  # an import: binds a local name and refers to another
    BIND = "bind"  # a parameter or local variable where it is bound: neither


@dataclass(frozen=True)
class _Bind:
    node: _Node  # the identifier leaf (or, with `text`, the node the name comes from)
    role: _Role
    text: str | None = None  # when the name is no identifier in the source (Go import paths)


_Binder = Callable[[_Node], Iterable[_Bind]]


def _tree_names(grammar: _Grammar, root: _Node, rows: frozenset[int]) -> Names:
    low, high = min(rows), max(rows)
    roles: dict[tuple[int, int], _Role] = {}
    defined: set[str] = set()
    used: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if _last_row(node) < low or _first_row(node) > high:
            continue  # nothing on the wanted lines: skip the whole subtree
        # A parent is visited before its children, so a leaf's role is known when we reach it.
        for bind in grammar.binders.get(node.type, _binds_nothing)(node):
            roles.setdefault(_span(bind.node), bind.role)
            if bind.role is not _Role.BIND and _first_row(bind.node) in rows:
                defined.add(bind.text or _text(bind.node))
        # Unbound identifiers are uses; so are the ones an import binds and refers to at once.
        role = roles.get(_span(node), _Role.DEFINE_AND_USE)
        wanted = node.type in grammar.identifiers and _first_row(node) in rows
        if wanted and role is _Role.DEFINE_AND_USE:
            used.add(_text(node))
        if node.type == "preproc_arg":
            used.update(_macro_body_uses(node, rows))
        stack.extend(node.children)
    return Names(frozenset(defined), frozenset(used - grammar.ignored))


def _macro_body_uses(body: _Node, rows: frozenset[int]) -> Iterator[str]:
    """Identifiers in a #define's body, which tree-sitter leaves unparsed, minus its parameters.

    Only macro definitions: other directives' arguments (`#pragma once`) name nothing.
    """
    macro = body.parent
    if macro is None or macro.type not in ("preproc_def", "preproc_function_def"):
        return
    params = _field(macro, "parameters")
    bound = {_text(p) for p in params.named_children} if params is not None else set()
    text = _text(body)
    for token in _IDENT.finditer(text):
        row = body.start_point.row + text.count("\n", 0, token.start())
        if row in rows and token.group() not in bound:
            yield token.group()


def _span(node: _Node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def _binds_nothing(node: _Node) -> Iterable[_Bind]:
    return ()


def _leaves(
    node: _Node | None,
    types: frozenset[str],
    skip: frozenset[str],
    stop: frozenset[str] = frozenset(),
) -> Iterator[_Node]:
    """Leaves of `types` under `node`, not looking into children whose field is in `skip`, nor
    below `node` into nodes of a `stop` type.

    Used on patterns: `skip` names the parts that are no bindings (types, default values, the
    keys of `{key: name}`), except that a pair pattern's value is the binding itself; `stop`
    holds paths (`Color::Red`), which refer to something and bind nothing.
    """
    stack = [] if node is None else [node]
    while stack:
        current = stack.pop()
        if current.type in types:
            yield current
            continue
        if current.type in stop and current is not node:
            continue
        for field, child in _fields(current):
            if field not in skip or (current.type == "pair_pattern" and field == "value"):
                stack.append(child)


_PATHS = frozenset({"scoped_identifier", "scoped_type_identifier", "member_expression"})


def _binder(field: str, role: _Role) -> _Binder:
    """Binds every node in `field` (which must be an identifier leaf) with `role`."""

    def bind(node: _Node) -> Iterator[_Bind]:
        for child in node.children_by_field_name(field):
            yield _Bind(child, role)

    return bind


def _pattern_binder(field: str | None, role: _Role, idents: frozenset[str]) -> _Binder:
    """Binds the identifiers of a pattern (the whole node when `field` is None)."""

    def bind(node: _Node) -> Iterator[_Bind]:
        target = node if field is None else _field(node, field)
        for leaf in _leaves(target, idents, _NOT_BOUND, _PATHS):
            yield _Bind(leaf, role)

    return bind


_NOT_BOUND = frozenset({"type", "value", "default", "right", "key", "return_type", "decorator"})


def _scoped_binder(field: str, idents: frozenset[str], functions: frozenset[str]) -> _Binder:
    """A variable declaration: global ones define their names, local ones only bind them."""

    def bind(node: _Node) -> Iterator[_Bind]:
        role = _Role.BIND if _has_ancestor(node, functions) else _Role.DEFINE
        for target in node.children_by_field_name(field):
            for leaf in _leaves(target, idents, _NOT_BOUND, _PATHS):
                yield _Bind(leaf, role)

    return bind


def _merge(*binders: _Binder) -> _Binder:
    def bind(node: _Node) -> Iterator[_Bind]:
        for binder in binders:
            yield from binder(node)

    return bind


_DEFINE_NAME = _binder("name", _Role.DEFINE)
_BIND_NAME = _binder("name", _Role.BIND)

# Python ----------------------------------------------------------------------------------------

_PY_IDENTS = frozenset({"identifier"})
# C and C++ -------------------------------------------------------------------------------------

_C_IDENTS = frozenset({"identifier", "type_identifier", "field_identifier"})
_CPP_IDENTS = _C_IDENTS | {"namespace_identifier"}
_C_FUNCTIONS = frozenset({"function_definition", "lambda_expression"})


def _c_declared(declarator: _Node | None) -> _Node | None:
    """The identifier a C declarator declares: `*names[10]` -> names, `A::f` -> f."""
    while declarator is not None and declarator.type not in _C_IDENTS:
        if declarator.type in ("qualified_identifier", "template_function", "template_type"):
            declarator = _field(declarator, "name")
        elif declarator.type == "destructor_name":
            declarator = next(iter(declarator.named_children), None)
        else:
            declarator = _field(declarator, "declarator") or next(
                (c for c in declarator.named_children if c.type not in _C_NOT_DECLARATORS), None
            )
    return declarator


# Children of a declarator that are never the declared name (parameters, sizes, initial values).
_C_NOT_DECLARATORS = frozenset(
    {"parameter_list", "type_qualifier", "attribute_specifier", "number_literal"}
)


def _c_declarators(role: _Role | None) -> _Binder:
    """Names declared by a declaration; `role` None: global ones define, local ones bind."""

    def bind(node: _Node) -> Iterator[_Bind]:
        actual = role or (_Role.BIND if _has_ancestor(node, _C_FUNCTIONS) else _Role.DEFINE)
        for declarator in node.children_by_field_name("declarator"):
            leaf = _c_declared(declarator)
            if leaf is not None:
                yield _Bind(leaf, actual)

    return bind


def _c_record(node: _Node) -> Iterator[_Bind]:
    """`struct point {...}` defines point; `struct point *p` only uses it."""
    if _field(node, "body") is not None:
        leaf = _c_declared(_field(node, "name"))
        if leaf is not None:
            yield _Bind(leaf, _Role.DEFINE)


def _c_function(node: _Node) -> Iterator[_Bind]:
    leaf = _c_declared(_field(node, "declarator"))
    if leaf is not None:
        yield _Bind(leaf, _Role.DEFINE)


_C_BINDERS: dict[str, _Binder] = {
    "function_definition": _c_function,
    "declaration": _c_declarators(None),
    "field_declaration": _c_declarators(_Role.DEFINE),
    "type_definition": _c_declarators(_Role.DEFINE),
    "parameter_declaration": _c_declarators(_Role.BIND),
    "optional_parameter_declaration": _c_declarators(_Role.BIND),
    "struct_specifier": _c_record,
    "union_specifier": _c_record,
    "enum_specifier": _c_record,
    "enumerator": _DEFINE_NAME,
    "preproc_def": _DEFINE_NAME,
    "preproc_function_def": _merge(
        _DEFINE_NAME, _pattern_binder("parameters", _Role.BIND, _C_IDENTS)
    ),
}
_CPP_BINDERS: dict[str, _Binder] = {
    **_C_BINDERS,
    "class_specifier": _c_record,
    "namespace_definition": _pattern_binder("name", _Role.DEFINE, _CPP_IDENTS),
    "alias_declaration": _DEFINE_NAME,
    "type_parameter_declaration": _pattern_binder(None, _Role.BIND, _CPP_IDENTS),
    "optional_type_parameter_declaration": _BIND_NAME,
}

# JavaScript and TypeScript ---------------------------------------------------------------------

_JS_IDENTS = frozenset(
    {
        "identifier",
        "property_identifier",
        "private_property_identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
    }
)
_TS_IDENTS = _JS_IDENTS | {"type_identifier"}
_JS_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "function",
        "generator_function",
        "arrow_function",
        "method_definition",
    }
)


def _js_import_specifier(node: _Node) -> Iterator[_Bind]:
    """`{a as b}` defines b and uses a; `{a}` defines and uses a."""
    alias = _field(node, "alias")
    name = _field(node, "name")
    if alias is not None:
        yield _Bind(alias, _Role.DEFINE)
    elif name is not None:
        yield _Bind(name, _Role.DEFINE_AND_USE)


def _js_binders(idents: frozenset[str]) -> dict[str, _Binder]:
    parameters = _pattern_binder(None, _Role.BIND, idents)
    defines = dict.fromkeys(
        (
            "function_declaration",
            "generator_function_declaration",
            "class_declaration",
            "abstract_class_declaration",
            "interface_declaration",
            "type_alias_declaration",
            "enum_declaration",
            "internal_module",
            "function_signature",
            "method_definition",
            "method_signature",
            "abstract_method_signature",
            "property_signature",
            "public_field_definition",
            "enum_body",
            "enum_assignment",
        ),
        _DEFINE_NAME,
    )
    return {
        **defines,
        "field_definition": _binder("property", _Role.DEFINE),
        "function_expression": _BIND_NAME,
        "class": _BIND_NAME,
        "variable_declarator": _scoped_binder("name", idents, _JS_FUNCTIONS),
        "formal_parameters": parameters,
        "arrow_function": _pattern_binder("parameter", _Role.BIND, idents),
        "catch_clause": _pattern_binder("parameter", _Role.BIND, idents),
        "type_parameter": _BIND_NAME,
        "import_specifier": _js_import_specifier,
        "import_clause": lambda n: (
            _Bind(c, _Role.DEFINE) for c in n.named_children if c.type == "identifier"
        ),
        "namespace_import": _pattern_binder(None, _Role.DEFINE, idents),
    }


# Go --------------------------------------------------------------------------------------------

_GO_IDENTS = frozenset({"identifier", "type_identifier", "field_identifier", "package_identifier"})
_GO_FUNCTIONS = frozenset({"function_declaration", "method_declaration", "func_literal"})


def _go_import(node: _Node) -> Iterator[_Bind]:
    """`str "strings"` defines str; `"net/http"` defines http (a package's usual name)."""
    alias = _field(node, "name")
    path = _field(node, "path")
    if alias is not None:
        if alias.type == "package_identifier":
            yield _Bind(alias, _Role.DEFINE)
    elif path is not None:
        parts = _text(path).strip('"`').split("/")
        # Module major versions (".../v2") are no part of the package name.
        if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
            parts.pop()
        yield _Bind(path, _Role.DEFINE, parts[-1])


_GO_BINDERS: dict[str, _Binder] = {
    "function_declaration": _DEFINE_NAME,
    "method_declaration": _DEFINE_NAME,
    "type_spec": _DEFINE_NAME,
    "type_alias": _DEFINE_NAME,
    "field_declaration": _DEFINE_NAME,
    "method_elem": _DEFINE_NAME,
    "method_spec": _DEFINE_NAME,
    "parameter_declaration": _BIND_NAME,
    "variadic_parameter_declaration": _BIND_NAME,
    "type_parameter_declaration": _BIND_NAME,
    "const_spec": _scoped_binder("name", _GO_IDENTS, _GO_FUNCTIONS),
    "var_spec": _scoped_binder("name", _GO_IDENTS, _GO_FUNCTIONS),
    "short_var_declaration": _pattern_binder("left", _Role.BIND, _GO_IDENTS),
    "range_clause": _pattern_binder("left", _Role.BIND, _GO_IDENTS),
    "import_spec": _go_import,
    "package_clause": _pattern_binder(None, _Role.BIND, frozenset({"package_identifier"})),
}

# Rust ------------------------------------------------------------------------------------------

_RUST_IDENTS = frozenset(
    {"identifier", "type_identifier", "field_identifier", "shorthand_field_identifier"}
)


def _rust_use(node: _Node | None) -> Iterator[_Bind]:
    """`use a::b::{c, d as e};` defines c and e, and uses everything it names."""
    if node is None:
        return
    if node.type == "identifier":
        yield _Bind(node, _Role.DEFINE_AND_USE)
    elif node.type == "scoped_identifier":
        yield from _rust_use(_field(node, "name"))
    elif node.type == "use_as_clause":
        alias = _field(node, "alias")
        if alias is not None:
            yield _Bind(alias, _Role.DEFINE)
    elif node.type == "scoped_use_list":
        yield from _rust_use(_field(node, "list"))
    elif node.type == "use_list":
        for child in node.named_children:
            yield from _rust_use(child)


_RUST_BINDERS: dict[str, _Binder] = {
    **dict.fromkeys(
        (
            "function_item",
            "function_signature_item",
            "struct_item",
            "enum_item",
            "union_item",
            "trait_item",
            "type_item",
            "mod_item",
            "const_item",
            "static_item",
            "macro_definition",
            "field_declaration",
            "enum_variant",
        ),
        _DEFINE_NAME,
    ),
    "parameter": _pattern_binder("pattern", _Role.BIND, _RUST_IDENTS),
    "closure_parameters": _pattern_binder(None, _Role.BIND, _RUST_IDENTS),
    "let_declaration": _pattern_binder("pattern", _Role.BIND, _RUST_IDENTS),
    "for_expression": _pattern_binder("pattern", _Role.BIND, _RUST_IDENTS),
    "type_parameter": _BIND_NAME,
    "use_declaration": lambda n: _rust_use(_field(n, "argument")),
}

# Java ------------------------------------------------------------------------------------------

_JAVA_IDENTS = frozenset({"identifier", "type_identifier"})


def _java_declarators(role: _Role) -> _Binder:
    def bind(node: _Node) -> Iterator[_Bind]:
        for declarator in node.children_by_field_name("declarator"):
            yield from _binder("name", role)(declarator)

    return bind


def _java_import(node: _Node) -> Iterator[_Bind]:
    """`import a.b.C;` defines and uses C; `import a.b.*;` defines nothing."""
    if any(child.type == "asterisk" for child in node.children):
        return
    imported = next(iter(node.named_children), None)
    name = _field(imported, "name") if imported is not None else None
    leaf = name or imported
    if leaf is not None and leaf.type == "identifier":
        yield _Bind(leaf, _Role.DEFINE_AND_USE)


_JAVA_BINDERS: dict[str, _Binder] = {
    **dict.fromkeys(
        (
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
            "annotation_type_element_declaration",
            "method_declaration",
            "constructor_declaration",
            "compact_constructor_declaration",
            "enum_constant",
        ),
        _DEFINE_NAME,
    ),
    "field_declaration": _java_declarators(_Role.DEFINE),
    "constant_declaration": _java_declarators(_Role.DEFINE),
    "local_variable_declaration": _java_declarators(_Role.BIND),
    "formal_parameter": _BIND_NAME,
    "catch_formal_parameter": _BIND_NAME,
    "spread_parameter": _java_declarators(_Role.BIND),
    "inferred_parameters": _pattern_binder(None, _Role.BIND, _JAVA_IDENTS),
    "lambda_expression": lambda n: (
        [_Bind(p, _Role.BIND)]
        if (p := _field(n, "parameters")) is not None and p.type == "identifier"
        else []
    ),
    "type_parameter": _pattern_binder(None, _Role.BIND, frozenset({"type_identifier"})),
    "import_declaration": _java_import,
    # A package or module clause names the file's own package: no reference to anything.
    "package_declaration": lambda n: (
        _Bind(leaf, _Role.BIND) for leaf in _leaves(n, _JAVA_IDENTS, frozenset())
    ),
}


# --- the fallback scan ------------------------------------------------------------------------
# Without a grammar, names come from identifiers `[A-Za-z_][A-Za-z0-9_]*` on the wanted lines
# (after blanking comments and string literals) and definitions from per-language regular
# expressions. A rule is a regex whose named groups say what the identifiers inside them are:
#   def     defined          defuse   defined and used (an imported name)
#   bind    neither (parameters, locals)
#   target  defined at module level, bound when local (language's `is_local` decides)
#   params  a parameter list: the language's `param` picks the name out of each parameter
#   imports comma-separated import items: `a as b` defines b and uses a, a plain item defines
#           and uses its last name (`first_imports`: its first, as Python's `import a.b`)
#   members comma-separated enum constants: the first name of each is defined
# A rule may carry a condition on its context (the lines before, a `{` on the next line).

_IDENT = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class _Text:
    raw: list[str]  # the file's lines
    clean: list[str]  # the same with comments and strings blanked out, columns preserved

    @functools.cached_property
    def owners(self) -> list[str | None]:
        """For each row, the header of the innermost `{` block open where it starts (the code
        before that `{`, or the line before for a `{` alone); None at top level. One pass over
        the file, so that context costs nothing per asked line.
        """
        owners: list[str | None] = []
        stack: list[str] = []
        previous = ""
        for line in self.clean:
            owners.append(stack[-1] if stack else None)
            for brace in re.finditer(r"[{}]", line):
                if brace.group() == "{":
                    stack.append(line[: brace.start()].strip() or previous)
                elif stack:
                    stack.pop()
            previous = line.strip() or previous
        return owners


@functools.lru_cache(maxsize=16)
def _scan_text(strip: re.Pattern[str], content: bytes) -> _Text:
    """The lines of `content`, raw and blanked. Cached: grouping asks hunk after hunk."""
    raw = content.decode("utf-8", "replace")
    return _Text(raw.split("\n"), _blank(strip, raw).split("\n"))


# A block whose header has one of these keywords (before any parenthesis, which would make it a
# function taking, say, a `struct point`) holds declarations: fields, methods, members.
_DECLARATION_BLOCK = re.compile(
    r"^[^(]*\b(struct|union|class|enum|namespace|interface|record|extern|trait|impl|mod)\b"
)


def _block_kind(header: str | None) -> str | None:
    if header is None or header.count(")") > header.count("("):
        return None  # `struct point *p)`: the end of a parameter list, so a function's body
    found = _DECLARATION_BLOCK.search(header)
    return None if found is None else found.group(1)


def _braces_local(text: _Text, row: int) -> bool:
    """Whether `row` is inside a function body (a block that holds no declarations)."""
    owner = text.owners[row]
    return owner is not None and _block_kind(owner) is None


def _in_block(*kinds: str) -> _When:
    """The row lies directly in a struct/class/enum/... body."""
    return lambda text, row, match: _block_kind(text.owners[row]) in kinds


@dataclass(frozen=True)
class _Mark:
    start: int
    end: int
    role: _Role
    text: str | None = None  # a defined name that is no identifier on the line (Go imports)


_When = Callable[[_Text, int, "re.Match[str]"], bool]
_Rule = Callable[["_Fallback", _Text, int], Iterator[_Mark]]


@dataclass(frozen=True)
class _Fallback:
    """How the scan reads one language family."""

    strip: re.Pattern[str]  # comments and literals, blanked before scanning
    rules: tuple[_Rule, ...]
    ignored: frozenset[str]  # keywords (contextual ones too) and builtin types
    param: Callable[[Sequence[str]], list[list[re.Match[str]]]] = lambda chunks: []
    is_local: Callable[[_Text, int], bool] = _braces_local  # is a `target` on this row local?


def _scan_names(lang: str | None, content: bytes, rows: frozenset[int]) -> Names:
    family = _FALLBACKS.get(lang or "")
    if family is None:
        return Names(frozenset(), frozenset())  # no code we know: it names nothing
    text = _scan_text(family.strip, content)
    defined: set[str] = set()
    used: set[str] = set()
    for row in sorted(r for r in rows if r < len(text.clean)):
        marks = [mark for rule in family.rules for mark in rule(family, text, row)]
        defined.update(m.text for m in marks if m.text is not None)
        roles = {(m.start, m.end): m.role for m in marks if m.text is None}
        for token in _IDENT.finditer(text.clean[row]):
            role = roles.get(token.span())
            if role in (_Role.DEFINE, _Role.DEFINE_AND_USE):
                defined.add(token.group())
            if role in (None, _Role.DEFINE_AND_USE):
                used.add(token.group())
    return Names(frozenset(defined - family.ignored), frozenset(used - family.ignored))


def _blank(pattern: re.Pattern[str], text: str) -> str:
    """`text` with every match of `pattern` replaced by spaces, keeping lines and columns."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def _rule(pattern: str, when: _When | None = None) -> _Rule:
    compiled = re.compile(pattern)

    def rule(family: _Fallback, text: _Text, row: int) -> Iterator[_Mark]:
        for match in compiled.finditer(text.clean[row]):
            if when is None or when(text, row, match):
                yield from _group_marks(family, text, row, match)

    return rule


def _group_marks(family: _Fallback, text: _Text, row: int, match: re.Match[str]) -> Iterator[_Mark]:
    for group, value in match.groupdict().items():
        if value is None:
            continue
        offset = match.start(group)
        if group in _ROLE_GROUPS:
            yield from _ident_marks(value, offset, _ROLE_GROUPS[group])
        elif group == "target":
            role = _Role.BIND if family.is_local(text, row) else _Role.DEFINE
            for token in _PATTERN_NAME.finditer(value):
                yield _Mark(offset + token.start(), offset + token.end(), role)
        elif group == "params":
            yield from _param_marks(family, value, offset)
        elif group in ("imports", "first_imports"):
            yield from _import_marks(value, offset, first=group == "first_imports")
        elif group == "members":
            for chunk, at in _chunks(value, offset):
                yield from _first_ident_mark(chunk, at, _Role.DEFINE)


_ROLE_GROUPS = {"def": _Role.DEFINE, "defuse": _Role.DEFINE_AND_USE, "bind": _Role.BIND}
# The names a destructuring pattern binds: in `{a, b: c}` that is a and c, not the key b.
_PATTERN_NAME = re.compile(r"(?<![\w$])[A-Za-z_$][\w$]*(?![\w$]|\s*:(?!:))")


def _ident_marks(value: str, offset: int, role: _Role) -> Iterator[_Mark]:
    for token in _IDENT.finditer(value):
        yield _Mark(offset + token.start(), offset + token.end(), role)


def _first_ident_mark(chunk: str, offset: int, role: _Role) -> Iterator[_Mark]:
    token = _IDENT.search(chunk)
    if token is not None:
        yield _Mark(offset + token.start(), offset + token.end(), role)


def _chunks(value: str, offset: int) -> Iterator[tuple[str, int]]:
    """Comma-separated parts of a list (with their columns), up to its closing bracket."""
    depth, start = 0, 0
    for index, char in enumerate(value + ","):
        if char in "([{<":
            depth += 1
        elif char in ")]}>" and depth > 0:
            depth -= 1
        elif char in ")]}" or (char == "," and depth == 0):
            yield value[start:index], offset + start
            start = index + 1
            if char != ",":
                return


def _param_marks(family: _Fallback, value: str, offset: int) -> Iterator[_Mark]:
    chunks = list(_chunks(value, offset))
    for (_, at), found in zip(chunks, family.param([c for c, _ in chunks]), strict=True):
        for name in found:
            yield _Mark(at + name.start(), at + name.end(), _Role.BIND)


def _import_marks(value: str, offset: int, first: bool) -> Iterator[_Mark]:
    for chunk, at in _chunks(value.replace("{", " ").replace("(", " "), offset):
        alias = re.search(r"\bas\s+([A-Za-z_]\w*)", chunk)
        tokens = list(_IDENT.finditer(chunk))
        if alias is not None:
            yield _Mark(at + alias.start(1), at + alias.end(1), _Role.DEFINE)
        elif tokens and not chunk.rstrip().endswith("*"):
            token = tokens[0] if first else tokens[-1]
            yield _Mark(at + token.start(), at + token.end(), _Role.DEFINE_AND_USE)


# Parameter names, per parameter (none: a parameter without a name) ---------------------------

_ParamNames = Callable[[Sequence[str]], list[list[re.Match[str]]]]


def _each(pick: Callable[[str], re.Match[str] | None]) -> _ParamNames:
    return lambda chunks: [[found] if (found := pick(chunk)) else [] for chunk in chunks]


def _first_names(chunks: Sequence[str]) -> list[list[re.Match[str]]]:
    """JS and TS: the name comes first (`x: int = 3`, `...rest`, `private r: number`); a
    destructuring parameter `{a, b: c}` binds a and c."""
    found: list[list[re.Match[str]]] = []
    for chunk in chunks:
        pattern = re.match(r"\s*(?:\.\.\.)?[{\[][^}\]]*", chunk)
        if pattern is not None:
            found.append(list(_PATTERN_NAME.finditer(chunk, 0, pattern.end())))
            continue
        head = re.sub(r"\s*=.*", "", chunk)
        names = (t for t in _IDENT.finditer(head) if t.group() not in _TS_MODIFIERS)
        found.append(list(itertools.islice(names, 1)))
    return found


def _last_name(chunk: str) -> re.Match[str] | None:
    """C-like and Java: the name comes last (`const char *name`), absent in `f(int)`."""
    tokens = list(_IDENT.finditer(re.sub(r"\s*=.*|\[.*", "", chunk)))
    return tokens[-1] if len(tokens) >= 2 else None


def _rust_name(chunk: str) -> re.Match[str] | None:
    """`mut x: T` -> x (the name is what stands before a single colon)."""
    return re.search(r"(?<![A-Za-z0-9_])[A-Za-z_]\w*(?=\s*:(?!:))", chunk)


def _go_names(chunks: Sequence[str]) -> list[list[re.Match[str]]]:
    """`(a, b int)` names a and b but `(int, string)` names nothing: parameters are all named or
    all unnamed, so one parameter with two words settles it for the whole list."""
    named = any(len(_IDENT.findall(chunk)) >= 2 for chunk in chunks)
    return [list(itertools.islice(_IDENT.finditer(chunk), 1 if named else 0)) for chunk in chunks]


# Context conditions ----------------------------------------------------------------------------


def _before(text: _Text, row: int) -> Iterator[str]:
    """The clean lines before `row`, nearest first (lazily: callers stop early)."""
    return (text.clean[r] for r in range(row - 1, -1, -1))


def _after(text: _Text, row: int) -> Iterator[str]:
    return (text.clean[r] for r in range(row + 1, len(text.clean)))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _opens_body(text: _Text, row: int, match: re.Match[str]) -> bool:
    """The statement from the match on goes on to `{` (a definition) before any `;`."""
    return _statement_end(text, row, match.start("params")) == "{"


def _c_definition(text: _Text, row: int, match: re.Match[str]) -> bool:
    """`type name(...)` defines a function when its body follows; outside function bodies a
    prototype, a method declaration or a global object (`Widget w(3);`) counts too. No
    statement keyword may head it."""
    if not _not_keyword_head(text, row, match) or match.group("def") in _C_STATEMENT_WORDS:
        return False
    end = _statement_end(text, row, match.start("params"))
    return end == "{" or (end == ";" and not _braces_local(text, row))


def _c_gnu_definition(text: _Text, row: int, match: re.Match[str]) -> bool:
    """GNU style: the name at column 0, its return type alone on the line before."""
    before = next((line for line in _before(text, row) if line.strip()), "")
    typeish = re.fullmatch(r"[A-Za-z_][\w\s*&:<>,]*", before.rstrip()) is not None
    qualified = "::" in match.group()  # `Widget::Widget(...)`: a constructor needs no type
    words = _IDENT.findall(before)
    return ((typeish and not set(words) & _C_STATEMENT_WORDS) or qualified) and _opens_body(
        text, row, match
    )


def _statement_end(text: _Text, row: int, column: int) -> str:
    """The first `{` or `;` from (row, column) on, looking at most 30 lines ahead."""
    for line in [text.clean[row][column:], *text.clean[row + 1 : row + 30]]:
        found = re.search(r"[{;]", line)
        if found is not None:
            return found.group()
    return ""


def _body_follows(text: _Text, row: int, match: re.Match[str]) -> bool:
    """`struct X {` on one line, or `{` opening the next non-blank line (Allman style)."""
    if "{" in text.clean[row][match.end() :] or "{" in match.group():
        return True
    following = next((line for line in _after(text, row) if line.strip()), "")
    return following.lstrip().startswith("{")


def _not_keyword_head(text: _Text, row: int, match: re.Match[str]) -> bool:
    """No statement keyword heads the match (`return f(x);`), and it is no bare `struct X;`."""
    words = _IDENT.findall(match.group("head") or "")
    return not set(words) & _C_STATEMENT_WORDS and words not in (["struct"], ["class"], ["union"])


def _not_keyword(words: frozenset[str]) -> _When:
    """The defined name is no keyword: `if (x) {` looks like a method to a regex."""
    return lambda text, row, match: match.group("def") not in words


def _go_block(text: _Text, row: int) -> str:
    """The keyword of the top-level block `row` is in ("const", "var", "type", "import", "func")."""
    for line in _before(text, row):
        if line[:1].isalpha():
            return line.split()[0]
    return ""


def _in_go_block(*keywords: str) -> _When:
    return lambda text, row, match: (
        text.clean[row][:1].isspace() and _go_block(text, row) in keywords
    )


def _go_imports(family: _Fallback, text: _Text, row: int) -> Iterator[_Mark]:
    """Import specs: the alias, or else the package's last path element. Strings are blanked in
    the clean text, so this reads the raw line."""
    line = text.raw[row]
    spec = re.fullmatch(r'\s*(?:import\s+)?(?:([A-Za-z_]\w*)\s+)?"([^"]+)"\s*(?://.*)?', line)
    in_block = line[:1].isspace() and _go_block(text, row) == "import"
    if spec is None or not (in_block or line.startswith("import")):
        return
    if spec.group(1) is not None:
        yield _Mark(spec.start(1), spec.end(1), _Role.DEFINE)
        return
    parts = spec.group(2).split("/")
    if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
        parts.pop()
    yield _Mark(0, 0, _Role.DEFINE, parts[-1])


def _c_typedef(family: _Fallback, text: _Text, row: int) -> Iterator[_Mark]:
    """`typedef ... name;` defines name; `typedef int (*cb)(int);` defines cb."""
    typedef = re.match(r"\s*typedef\b(.*);", text.clean[row])
    if typedef is None:
        return
    # Blank nested braces and array sizes (keeping columns): `struct { int a; } pt` -> pt.
    body = typedef.group(1)
    while (inner := re.sub(r"\{[^{}]*\}|\[[^\[\]]*\]", _spaces, body)) != body:
        body = inner
    pointer = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)", body)
    names = list(_IDENT.finditer(body))
    name = pointer.span(1) if pointer is not None else names[-1].span() if names else None
    if name is not None:
        yield _Mark(typedef.start(1) + name[0], typedef.start(1) + name[1], _Role.DEFINE)


def _spaces(match: re.Match[str]) -> str:
    return " " * len(match.group())


def _c_define(family: _Fallback, text: _Text, row: int) -> Iterator[_Mark]:
    """`#define SQ(a) ((a) * (a))` defines SQ; its parameter a is bound wherever it appears."""
    line = text.clean[row]
    define = re.match(rf"\s*#\s*define\s+({_NAME})(?:\(([^)]*)\))?", line)
    if define is None:
        return
    yield _Mark(define.start(1), define.end(1), _Role.DEFINE)
    params = set(_IDENT.findall(define.group(2) or ""))
    for token in _IDENT.finditer(line, define.end(1)):
        if token.group() in params:
            yield _Mark(token.start(), token.end(), _Role.BIND)


# Strip patterns: comments and string/char literals --------------------------------------------

_C_STRIP = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])'"
    r"|^[ \t]*#[ \t]*(?:include|pragma|import)[^\n]*",  # `#include <x.h>` names no identifiers
    re.DOTALL | re.MULTILINE,
)
_JS_STRIP = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`", re.DOTALL
)
_GO_STRIP = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])+'|`[^`]*`", re.DOTALL
)
# Rust: a char literal is one character in quotes, which keeps lifetimes ('a) out of it.
_RUST_STRIP = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\\n])'", re.DOTALL)
_PY_STRIP = re.compile(
    r"#[^\n]*"
    r"|(?<![A-Za-z0-9_])[rRbBuUfF]{0,2}(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''"
    r"|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')",
    re.DOTALL,
)

# Word lists ------------------------------------------------------------------------------------
# `reserved` words are never identifiers. Contextual keywords (Python's `match`, JS's `get`,
# `from`, Rust's `union`) can be names, so the grammar, which can tell, keeps them; the scan,
# which cannot, drops them.


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PY_RESERVED = _words(
    "False None True and as assert async await break class continue def del elif else except "
    "finally for from global if import in is lambda nonlocal not or pass raise return try while "
    "with yield"
)
_C_RESERVED = _words(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while _Bool _Complex _Atomic _Noreturn _Static_assert "
    "_Thread_local _Alignas _Alignof"
)
_C_BUILTIN_TYPES = _words(
    "bool size_t ssize_t ptrdiff_t intptr_t uintptr_t max_align_t wchar_t int8_t int16_t int32_t "
    "int64_t uint8_t uint16_t uint32_t uint64_t char8_t char16_t char32_t nullptr_t"
)
# Preprocessor directive words appear as plain tokens to the scan.
_C_CONTEXTUAL = _words("define undef ifdef ifndef elif endif defined include line error pragma")
_CPP_RESERVED = _C_RESERVED | _words(
    "alignas alignof and and_eq asm bitand bitor catch class compl concept const_cast consteval "
    "constexpr constinit co_await co_return co_yield decltype delete dynamic_cast explicit export "
    "false friend mutable namespace new noexcept not not_eq nullptr operator or or_eq private "
    "protected public reinterpret_cast requires static_assert static_cast template this "
    "thread_local throw true try typeid typename using virtual xor xor_eq"
)
_CPP_CONTEXTUAL = _C_CONTEXTUAL | _words("final override import module")
# Words that start a statement rather than a declaration (C, C++ and Java).
_C_STATEMENT_WORDS = _words(
    "return else case goto throw delete new sizeof typedef using co_return co_yield if while for "
    "switch do assert yield"
)
_JS_RESERVED = _words(
    "break case catch class const continue debugger default delete do else export extends false "
    "finally for function if import in instanceof new null return super switch this throw true "
    "try typeof var void while with yield let await undefined"
)
_JS_CONTEXTUAL = _words("async static get set of from as")
_TS_MODIFIERS = _words("public private protected readonly override declare abstract")
_TS_RESERVED = _JS_RESERVED | _words("enum interface implements")
_TS_BUILTIN_TYPES = _words("any unknown never number string boolean symbol bigint object")
_TS_CONTEXTUAL = (
    _JS_CONTEXTUAL
    | _TS_MODIFIERS
    | _words("type namespace module keyof infer is asserts satisfies")
)
_GO_RESERVED = _words(
    "break case chan const continue default defer else fallthrough for func go goto if import "
    "interface map package range return select struct switch type var"
)
_GO_BUILTIN_TYPES = _words(
    "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string "
    "uint uint8 uint16 uint32 uint64 uintptr any comparable true false nil iota"
)
_RUST_RESERVED = _words(
    "as async await break const continue crate dyn else enum extern false fn for if impl in let "
    "loop match mod move mut pub ref return self Self static struct super trait true type unsafe "
    "use where while"
)
_RUST_BUILTIN_TYPES = _words(
    "bool char str i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64"
)
_RUST_CONTEXTUAL = _words("union macro_rules")
_JAVA_RESERVED = _words(
    "abstract assert boolean break byte case catch char class const continue default do double "
    "else enum extends final finally float for goto if implements import instanceof int "
    "interface long native new package private protected public return short static strictfp "
    "super switch synchronized this throw throws transient try void volatile while true false null"
)
_JAVA_CONTEXTUAL = _words("var record yield sealed permits")

# The grammars ----------------------------------------------------------------------------------

_C_SCOPES = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "preproc_def": "macro",
    "preproc_function_def": "macro",
}
_JS_SCOPES = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    "variable_declarator": "function",
    "field_definition": "method",
}
_TS_SCOPES = {
    **_JS_SCOPES,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "module": "namespace",
    "type_alias_declaration": "type",
    "public_field_definition": "method",
}


def _ts(factory: str) -> _Grammar:
    return _Grammar(
        wheel=("tree_sitter_typescript", factory),
        separator=".",
        scope_kinds=_TS_SCOPES,
        identifiers=_TS_IDENTS,
        binders=_js_binders(_TS_IDENTS),
        ignored=_TS_RESERVED | _TS_BUILTIN_TYPES,
        wrappers=frozenset({"export_statement"}),
        leading=frozenset({"decorator"}),
    )


_GRAMMARS: dict[str, _Grammar] = {
    "python": _Grammar(
        wheel=("tree_sitter_python", "language"),
        separator=".",
        scope_kinds={"function_definition": "function", "class_definition": "class"},
        identifiers=_PY_IDENTS,
        binders={},  # Python's names are resolved by scope: see _py_names
        ignored=_PY_RESERVED,
        wrappers=frozenset({"decorated_definition"}),
    ),
    "c": _Grammar(
        wheel=("tree_sitter_c", "language"),
        separator=".",
        scope_kinds=_C_SCOPES,
        identifiers=_C_IDENTS,
        binders=_C_BINDERS,
        ignored=_C_RESERVED | _C_BUILTIN_TYPES,
    ),
    "cpp": _Grammar(
        wheel=("tree_sitter_cpp", "language"),
        separator="::",
        scope_kinds={**_C_SCOPES, "class_specifier": "class", "namespace_definition": "namespace"},
        identifiers=_CPP_IDENTS,
        binders=_CPP_BINDERS,
        ignored=_CPP_RESERVED | _C_BUILTIN_TYPES,
        wrappers=frozenset({"template_declaration"}),
    ),
    "javascript": _Grammar(
        wheel=("tree_sitter_javascript", "language"),
        separator=".",
        scope_kinds=_JS_SCOPES,
        identifiers=_JS_IDENTS,
        binders=_js_binders(_JS_IDENTS),
        ignored=_JS_RESERVED,
        wrappers=frozenset({"export_statement"}),
        leading=frozenset({"decorator"}),
    ),
    "typescript": _ts("language_typescript"),
    "tsx": _ts("language_tsx"),
    "go": _Grammar(
        wheel=("tree_sitter_go", "language"),
        separator=".",
        scope_kinds={
            "function_declaration": "function",
            "method_declaration": "method",
            "type_spec": "type",
        },
        identifiers=_GO_IDENTS,
        binders=_GO_BINDERS,
        ignored=_GO_RESERVED | _GO_BUILTIN_TYPES,
    ),
    "rust": _Grammar(
        wheel=("tree_sitter_rust", "language"),
        separator="::",
        scope_kinds={
            "function_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "union",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "namespace",
            "macro_definition": "macro",
        },
        identifiers=_RUST_IDENTS,
        binders=_RUST_BINDERS,
        ignored=_RUST_RESERVED | _RUST_BUILTIN_TYPES,
        leading=frozenset({"attribute_item"}),
    ),
    "java": _Grammar(
        wheel=("tree_sitter_java", "language"),
        separator=".",
        scope_kinds={
            "class_declaration": "class",
            "record_declaration": "class",
            "interface_declaration": "interface",
            "annotation_type_declaration": "interface",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "constructor_declaration": "method",
            "compact_constructor_declaration": "method",
        },
        identifiers=_JAVA_IDENTS,
        binders=_JAVA_BINDERS,
        ignored=_JAVA_RESERVED,
    ),
}


# The fallback rules ----------------------------------------------------------------------------

_NAME = r"[A-Za-z_$][\w$]*"
_NAMES = rf"{_NAME}(?:\s*,\s*{_NAME})*"
_C_TYPE_WORDS = r"(?:[A-Za-z_][\w:<>,]*[\s*&]+)+"

_C_RULES = (
    _c_define,
    # `type name(...)`: a function when a body follows; a prototype outside function bodies.
    _rule(
        rf"^(?P<head>\s*{_C_TYPE_WORDS})(?:{_NAME}::)*(?P<def>~?{_NAME})\s*\((?P<params>.*)",
        _c_definition,
    ),
    # GNU style: `static char *` on one line, `name_of (...)` at column 0 on the next.
    _rule(rf"^(?:{_NAME}::)*(?P<def>~?{_NAME})\s*\((?P<params>.*)", _c_gnu_definition),
    _rule(
        r"^\s*(?:typedef\s+)?(?:template\s*<.*>\s*)?"
        r"(?:struct|union|class|namespace|enum(?:\s+(?:class|struct))?)\s+"
        rf"(?:[A-Z_][A-Z0-9_]*\s+)?(?P<def>{_NAME})\s*(?:final\b\s*)?(?::(?!:)[^;{{]*)?(?=\{{|$)",
        _body_follows,
    ),
    _rule(r"\benum\b[^{;]*\{(?P<members>[^}]*)"),
    _rule(r"^\s*(?P<members>[^;{}()]+)", _in_block("enum")),
    _c_typedef,
    _rule(rf"^\s*\}}\s*(?P<def>{_NAME}(?:\s*,\s*\**\s*{_NAME})*)\s*;"),  # `} name;`
    # `type name = ...;`: a global variable, a field, or (in a function body) a local.
    _rule(
        rf"^(?P<head>\s*{_C_TYPE_WORDS})(?P<target>{_NAME})\s*(?:\[[^\]]*\]\s*)*(?:=|;|,)",
        _not_keyword_head,
    ),
    _rule(rf"^\s*using\s+(?P<def>{_NAME})\s*="),
    _rule(rf"(?:<|,)\s*(?:typename|class)\s+(?P<bind>{_NAME})"),  # template parameters
)
_JS_METHOD_WORDS = (
    r"(?:(?:static|async|get|set|public|private|protected|readonly|abstract|override)\s+)*"
)
_JS_RULES = (
    _rule(rf"\bfunction\b\s*\*?\s*(?P<def>{_NAME})\s*(?:<[^>]*>)?\s*\((?P<params>.*)"),
    _rule(rf"\bclass\s+(?P<def>{_NAME})"),
    _rule(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?"
        rf"(?:interface|enum|namespace)\s+(?P<def>{_NAME})"
    ),
    _rule(rf"^\s*(?:export\s+)?(?:declare\s+)?type\s+(?P<def>{_NAME})\s*(?:<[^>]*>)?\s*="),
    _rule(rf"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<target>{_NAME}|\{{[^}}]*\}}|\[[^\]]*\])"),
    _rule(r"\benum\b[^{;]*\{(?P<members>[^}]*)"),
    _rule(r"^\s*(?P<members>[^;{}()]+)", _in_block("enum")),
    # A class field: `radius: number = 1;`, `handler = (e) => {...}`, `static s = 1;`.
    _rule(
        rf"^\s*(?:@{_NAME}(?:\([^)]*\))?\s+)*{_JS_METHOD_WORDS}(?P<def>#?{_NAME})\s*[?!]?\s*"
        r"(?::[^=;]*)?(?:=(?![=>])|;)",
        _in_block("class"),
    ),
    # The parameters of `const f = (a, b) => ...` and `const g = x => ...`.
    _rule(
        rf"^\s*(?:export\s+)?(?:const|let|var)\s+{_NAME}\s*(?::[^=]*)?=\s*(?:async\s+)?"
        rf"(?:\((?P<params>[^)]*)\)|(?P<bind>{_NAME}))\s*(?::[^=]*)?=>"
    ),
    _rule(
        rf"^\s+{_JS_METHOD_WORDS}\*?\s*(?P<def>#?{_NAME})\s*(?:<[^>]*>)?\s*"
        r"\((?P<params>[^)]*)\)\s*(?::\s*[^{=;]+)?\{",
        _not_keyword(_TS_RESERVED),
    ),
)


def _js_imports(family: _Fallback, text: _Text, row: int) -> Iterator[_Mark]:
    """`import a, {b as c, d} from "m"` / `import * as ns from "m"` (strings are blanked)."""
    clause = re.match(r"\s*import\s+(?:type\s+)?(.*?)\s*\bfrom\b", text.clean[row])
    if clause is None:
        return
    at, value = clause.start(1), clause.group(1)
    for pattern in (rf"^({_NAME})\s*(?:,|$)", rf"\*\s*as\s+({_NAME})"):
        bound = re.search(pattern, value)
        if bound is not None:
            yield _Mark(at + bound.start(1), at + bound.end(1), _Role.DEFINE)
    braces = re.search(r"\{([^}]*)", value)
    if braces is not None:
        yield from _import_marks(braces.group(1), at + braces.start(1), first=False)


_GO_RULES = (
    _rule(rf"^func\s+(?P<def>{_NAME})\s*(?:\[[^\]]*\])?\s*\((?P<params>.*)"),
    _rule(
        rf"^func\s*\(\s*(?:(?P<bind>{_NAME})\s+)?\*?\s*[A-Za-z_][^)]*\)\s*(?P<def>{_NAME})"
        r"\s*(?:\[[^\]]*\])?\s*\((?P<params>.*)"
    ),
    _rule(rf"^type\s+(?P<def>{_NAME})"),
    _rule(rf"^package\s+(?P<bind>{_NAME})"),
    _rule(rf"^(?:const|var)\s+(?P<def>{_NAMES})"),
    # Inside `const (`, `var (`, `type (` blocks and struct/interface bodies.
    _rule(
        rf"^\s+(?P<def>{_NAMES})(?=\s*=|\s+[\w*\[]|\s*\(|\s*$)",
        _in_go_block("const", "var", "type"),
    ),
    _rule(rf"^\s*(?:for\s+)?(?P<bind>{_NAMES})\s*:="),
    _go_imports,
)
_RUST_RULES = (
    _rule(rf"\bfn\s+(?P<def>{_NAME})\s*(?:<[^>]*>)?\s*\((?P<params>.*)"),
    _rule(rf"\b(?:struct|enum|trait|mod|union|type)\s+(?P<def>{_NAME})"),
    _rule(rf"\b(?:const|static)\s+(?:mut\s+)?(?P<def>{_NAME})\s*:"),
    _rule(rf"\bmacro_rules!\s*(?P<def>{_NAME})"),
    _rule(rf"\blet\s+(?:mut\s+)?(?P<bind>{_NAME})\b(?!\s*[{{(])"),  # not `let Point {{ x }}`
    _rule(rf"^\s*(?:pub(?:\([^)]*\))?\s+)?(?P<def>{_NAME})\s*:(?!:)", _in_block("struct", "union")),
    _rule(rf"^\s*(?P<def>{_NAME})\s*(?:[({{,=]|$)", _in_block("enum")),
    _rule(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(?P<imports>[^;]*)"),
)
_JAVA_MODIFIERS = (
    r"(?:(?:public|private|protected|static|final|abstract|synchronized|native|default"
    r"|strictfp|transient|volatile)\s+|@\w+(?:\([^)]*\))?\s+)"
)
_JAVA_RULES = (
    _rule(rf"\b(?:class|interface|enum|record)\s+(?P<def>{_NAME})"),
    _rule(
        rf"^\s*{_JAVA_MODIFIERS}*(?:<[^>]*>\s*)?(?P<head>[\w.$]+(?:<[^()]*>)?(?:\[\])*\s+)"
        rf"(?P<def>{_NAME})\s*\((?P<params>.*)",
        _not_keyword_head,
    ),
    # `type name = ...;`: a field in a class body, a local variable in a method.
    _rule(
        rf"^\s*{_JAVA_MODIFIERS}*(?P<head>[\w.$]+(?:<[^()=]*>)?(?:\[\])*\s+)(?P<target>{_NAME})"
        r"\s*(?:=|;|,)",
        _not_keyword_head,
    ),
    _rule(r"^\s*(?P<members>[^;{}()]+)", _in_block("enum")),
    _rule(rf"^\s*import\s+(?:static\s+)?[\w.]*?(?P<defuse>{_NAME})\s*;"),
    _rule(r"^\s*package\s+(?P<bind>[\w.]+)"),
)

_TS_FALLBACK = _Fallback(
    _JS_STRIP,
    (*_JS_RULES, _js_imports),
    _TS_RESERVED | _TS_BUILTIN_TYPES | _TS_CONTEXTUAL,
    _first_names,
)
_FALLBACKS: dict[str, _Fallback] = {
    "c": _Fallback(
        _C_STRIP, _C_RULES, _C_RESERVED | _C_BUILTIN_TYPES | _C_CONTEXTUAL, _each(_last_name)
    ),
    "cpp": _Fallback(
        _C_STRIP, _C_RULES, _CPP_RESERVED | _C_BUILTIN_TYPES | _CPP_CONTEXTUAL, _each(_last_name)
    ),
    "javascript": _Fallback(
        _JS_STRIP, (*_JS_RULES, _js_imports), _JS_RESERVED | _JS_CONTEXTUAL, _first_names
    ),
    "typescript": _TS_FALLBACK,
    "tsx": _TS_FALLBACK,
    "go": _Fallback(_GO_STRIP, _GO_RULES, _GO_RESERVED | _GO_BUILTIN_TYPES, _go_names),
    "rust": _Fallback(
        _RUST_STRIP,
        _RUST_RULES,
        _RUST_RESERVED | _RUST_BUILTIN_TYPES | _RUST_CONTEXTUAL,
        _each(_rust_name),
    ),
    "java": _Fallback(_C_STRIP, _JAVA_RULES, _JAVA_RESERVED | _JAVA_CONTEXTUAL, _each(_last_name)),
}


# --- Python: names resolved by scope ----------------------------------------------------------
# Python names are matched across the project without knowing what they refer to, so an
# unscoped match is mostly noise: every `def parse` would match every `obj.parse`, and every
# parameter called `name` every other `name`. So for Python both modes resolve names the way the
# interpreter does (LEGB) before answering: they first collect, over the whole file, the scopes
# (module, classes, functions, lambdas, comprehensions) with the names each binds, and the
# occurrences of names with the scope they occur in; resolution then turns each occurrence into
# the project-level names it defines or uses (see `Names`). The tree and the scan differ only in
# how they find scopes and occurrences; one resolver decides for both, so the modes agree.


class _PyKind(Enum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"  # def, lambda, comprehension: Python's function scopes


# eq=False: scopes are compared and hashed by identity (a class's bases may be walked twice).
@dataclass(eq=False)
class _PyScope:
    kind: _PyKind
    parent: _PyScope | None
    qualified: str | None = None  # a class reachable from the module: "Outer.Inner"
    owner: _PyScope | None = None  # a method's class
    self_name: str | None = None  # a method's first parameter (self, cls), unless static
    comprehension: bool = False  # `:=` in a comprehension binds in the scope around it
    bound: set[str] = dataclasses.field(default_factory=set)
    declared_global: set[str] = dataclasses.field(default_factory=set)
    declared_nonlocal: set[str] = dataclasses.field(default_factory=set)
    classes: dict[str, _PyScope] = dataclasses.field(default_factory=dict)
    # Import-bound names -> whether by `from m import name` (then maybe a class, not a module).
    imports: dict[str, bool] = dataclasses.field(default_factory=dict)
    bases: list[str] = dataclasses.field(default_factory=list)  # a class's, last dotted part


class _PyOcc(Enum):
    BIND = "bind"  # a name bound in its scope (def, class, assignment, import)
    REFER = "refer"  # a bare name read
    MEMBER = "member"  # `obj.attr` read, obj a bare name
    MEMBER_STORE = "member store"  # `obj.attr = ...`, obj a bare name
    IMPORTED = "imported"  # a name an import refers to: always a use


@dataclass(frozen=True)
class _PyOccurrence:
    kind: _PyOcc
    row: int  # 0-based
    scope: _PyScope
    name: str
    member: str = ""  # the attribute of MEMBER and MEMBER_STORE


@dataclass
class _PyFound:
    """What a pass over one file collects: its scopes (through `module`) and occurrences."""

    module: _PyScope
    occurrences: list[_PyOccurrence] = dataclasses.field(default_factory=list)

    def add(self, kind: _PyOcc, row: int, scope: _PyScope, name: str, member: str = "") -> None:
        if kind is _PyOcc.BIND:
            scope.bound.add(name)
        self.occurrences.append(_PyOccurrence(kind, row, scope, name, member))


_PY_MODULE_DUNDERS = _words("__file__ __path__ __builtins__ __cached__ __annotations__")
# Names every module sees without binding them. A module that binds one (`def format`) shadows it.
_PY_BUILTINS = frozenset(dir(builtins)) | _PY_MODULE_DUNDERS
# Every module binds its own, and no module reads another's by name: matching them only joins
# unrelated modules.
_PY_PER_MODULE = _words("__all__")


def _py_names(path: str, content: bytes, rows: frozenset[int]) -> Names:
    by_row = _py_facts(content, _usable_language(path) is not None)
    found = [by_row[row] for row in rows if row in by_row]
    return Names(
        frozenset().union(*(n.defined for n in found)), frozenset().union(*(n.used for n in found))
    )


@functools.lru_cache(maxsize=16)
def _py_facts(content: bytes, tree: bool) -> dict[int, Names]:
    """Each row's resolved names. Cached: grouping asks about the same file hunk after hunk, and
    every answer needs the whole file (an assignment further down makes a name local)."""
    root = _parse("python", content) if tree else None
    found = _py_tree_found(root) if root is not None else _py_scan_found(content)
    defined: dict[int, set[str]] = {}
    used: dict[int, set[str]] = {}
    for occurrence in found.occurrences:
        names, uses = _py_resolve(occurrence)
        defined.setdefault(occurrence.row, set()).update(names)
        used.setdefault(occurrence.row, set()).update(uses)
    return {
        row: Names(frozenset(defined[row]), frozenset(used[row]))
        for row in defined.keys() | used.keys()
    }


# Resolution -------------------------------------------------------------------------------------


def _py_lookup(scope: _PyScope, name: str) -> _PyScope | None:
    """The scope whose binding `name` refers to from `scope` (LEGB), None when the module does
    not bind it (a builtin, or a name from a star import)."""
    current: _PyScope | None = scope
    while current is not None:
        if current.kind is _PyKind.FUNCTION:
            if name in current.declared_global:
                return _py_module(current)
            if name in current.bound and name not in current.declared_nonlocal:
                return current
        elif current.kind is _PyKind.CLASS:
            # A class body's names are visible in the body itself, not in its methods.
            if current is scope and name in current.bound:
                return current
        elif name in current.bound:
            return current
        current = current.parent
    return None


def _py_module(scope: _PyScope) -> _PyScope:
    while scope.parent is not None:
        scope = scope.parent
    return scope


def _py_resolve(occurrence: _PyOccurrence) -> tuple[set[str], set[str]]:
    """(defined, used) project-level names of one occurrence."""
    kind, scope, name = occurrence.kind, occurrence.scope, occurrence.name
    if name in _PY_PER_MODULE and kind in (_PyOcc.BIND, _PyOcc.REFER):
        return set(), set()
    if kind is _PyOcc.IMPORTED:
        return set(), {name}
    if kind is _PyOcc.BIND:
        return _py_definition(scope, name), set()
    if kind is _PyOcc.REFER:
        return set(), _py_reference(scope, name)
    return _py_member(occurrence)


def _py_definition(scope: _PyScope, name: str) -> set[str]:
    if scope.kind is _PyKind.MODULE or name in scope.declared_global:
        return {name}
    if scope.kind is _PyKind.CLASS and scope.qualified is not None:
        return {f"{scope.qualified}.{name}"}
    return set()  # a parameter or local; or a member of a class no other module can name


def _py_reference(scope: _PyScope, name: str) -> set[str]:
    found = _py_lookup(scope, name)
    if found is None:
        return set() if name in _PY_BUILTINS else {name}
    if found.kind is _PyKind.MODULE:
        return {name}
    if found.kind is _PyKind.CLASS and found.qualified is not None:
        return {f"{found.qualified}.{name}"}
    return set()


def _py_member(occurrence: _PyOccurrence) -> tuple[set[str], set[str]]:
    """`obj.attr`: a member of the method's own class (self/cls), of a class, or of an imported
    module; of any other object Python cannot tell without running, so it names nothing."""
    obj, attr = occurrence.name, occurrence.member
    found = _py_lookup(occurrence.scope, obj)
    if found is None:
        return set(), set()
    owner = found.owner
    if obj == found.self_name and owner is not None and owner.qualified is not None:
        if occurrence.kind is _PyOcc.MEMBER_STORE:
            return {f"{owner.qualified}.{attr}"}, set()
        return set(), _py_members(owner, attr)
    if obj in found.classes:
        return set(), _py_members(found.classes[obj], attr)
    if obj in found.imports:
        # `from m import X`: X may be a class as well as a module.
        return set(), {attr, f"{obj}.{attr}"} if found.imports[obj] else {attr}
    return set(), set()


def _py_members(cls: _PyScope, attr: str) -> set[str]:
    """The names `attr` may be found under through `cls` and its bases (the file's own classes
    are followed to their bases; another module's class contributes "Base.attr")."""
    names: set[str] = set()
    seen: set[_PyScope] = set()
    todo = [cls]
    while todo:
        current = todo.pop()
        if current in seen or current.qualified is None or current.parent is None:
            continue
        seen.add(current)
        names.add(f"{current.qualified}.{attr}")
        for base in current.bases:
            where = _py_lookup(current.parent, base)
            if where is not None and base in where.classes:
                todo.append(where.classes[base])
            elif base not in _PY_BUILTINS:
                names.add(f"{base}.{attr}")
    return names


# Occurrences from the tree ----------------------------------------------------------------------


class _PyCtx(Enum):
    LOAD = "load"  # bare names are read
    STORE = "store"  # bare names are bound (assignment and loop targets)
    PATTERN = "pattern"  # a case pattern: bare names capture, dotted names are read


_PyTask = tuple[_Node, _PyScope, _PyCtx]
_PyVisit = Callable[[_PyFound, _Node, _PyScope], Iterable[_PyTask]]


def _py_tree_found(root: _Node) -> _PyFound:
    found = _PyFound(_PyScope(_PyKind.MODULE, None))
    # A work list, not recursion: long operator chains make deep trees.
    stack: list[_PyTask] = [(root, found.module, _PyCtx.LOAD)]
    while stack:
        node, scope, ctx = stack.pop()
        stack.extend(_py_visit(found, node, scope, ctx))
    return found


def _py_visit(found: _PyFound, node: _Node, scope: _PyScope, ctx: _PyCtx) -> Iterable[_PyTask]:
    if node.type == "identifier":
        kind = _PyOcc.REFER if ctx is _PyCtx.LOAD else _PyOcc.BIND
        found.add(kind, _first_row(node), scope, _text(node))
        return ()
    if ctx is _PyCtx.STORE:
        return _py_store(found, node, scope)
    if ctx is _PyCtx.PATTERN:
        return _py_pattern(found, node, scope)
    visit = _PY_VISITORS.get(node.type)
    if visit is not None:
        return visit(found, node, scope)
    return _py_load(scope, node.named_children)


def _py_load(scope: _PyScope, nodes: Iterable[_Node | None]) -> list[_PyTask]:
    return [(n, scope, _PyCtx.LOAD) for n in nodes if n is not None]


def _py_store(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    if node.type == "attribute":
        return _py_attribute(found, node, scope, _PyOcc.MEMBER_STORE)
    if node.type in _PY_TARGET_LISTS:
        return [(child, scope, _PyCtx.STORE) for child in node.named_children]
    return [(node, scope, _PyCtx.LOAD)]  # `a[i] = ...` reads a and i


_PY_TARGET_LISTS = frozenset(
    {
        "pattern_list",
        "tuple_pattern",
        "list_pattern",
        "tuple",
        "list",
        "expression_list",
        "parenthesized_expression",
        "list_splat_pattern",
        "list_splat",
        "as_pattern_target",
    }
)


def _py_pattern(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    """`case Point(x=0, y=yy) | [q, *rest]`: captures yy, q, rest and reads Point; a dotted
    name (`Color.RED`) is a value to compare with, so it is read."""
    parts = node.named_children
    if node.type == "dotted_name":
        if len(parts) == 1 and _text(parts[0]) != "_":
            found.add(_PyOcc.BIND, _first_row(parts[0]), scope, _text(parts[0]))
            return ()
        return _py_dotted(found, node, scope)
    if node.type == "class_pattern" and parts and parts[0].type == "dotted_name":
        cls, parts = parts[0], parts[1:]
        _py_dotted(found, cls, scope)
    elif node.type == "keyword_pattern" and parts and parts[0].type == "identifier":
        parts = parts[1:]  # the attribute matched against, not a name in scope
    elif node.type == "dict_pattern":
        keys = node.children_by_field_name("key")
        return [*_py_load(scope, keys), *_py_patterns(scope, _py_other_children(node, "key"))]
    return _py_patterns(scope, parts)


def _py_patterns(scope: _PyScope, nodes: Iterable[_Node]) -> list[_PyTask]:
    return [(n, scope, _PyCtx.PATTERN) for n in nodes]


def _py_dotted(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    """`a.b.c` as a dotted_name: reads a, and b as a member of a."""
    parts = node.named_children
    if parts:
        found.add(_PyOcc.REFER, _first_row(parts[0]), scope, _text(parts[0]))
    if len(parts) > 1:
        found.add(_PyOcc.MEMBER, _first_row(parts[1]), scope, _text(parts[0]), _text(parts[1]))
    return ()


def _py_attribute(
    found: _PyFound, node: _Node, scope: _PyScope, kind: _PyOcc = _PyOcc.MEMBER
) -> Iterable[_PyTask]:
    obj, attr = _field(node, "object"), _field(node, "attribute")
    if obj is None or attr is None or obj.type != "identifier":
        return _py_load(scope, [obj])  # `f().x`, `a.b.c`: only the object is resolved
    found.add(_PyOcc.REFER, _first_row(obj), scope, _text(obj))
    found.add(kind, _first_row(attr), scope, _text(obj), _text(attr))
    return ()


def _py_function(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    name = _field(node, "name")
    if name is not None:
        found.add(_PyOcc.BIND, _first_row(name), scope, _text(name))
    method = scope.kind is _PyKind.CLASS
    inner = _PyScope(_PyKind.FUNCTION, scope, owner=scope if method else None)
    tasks = _py_parameters(inner, _field(node, "parameters"))
    if method and not _py_is_static(node):
        inner.self_name = _py_first_parameter(_field(node, "parameters"))
    for parameter in _leaves(_field(node, "type_parameters"), _PY_IDENTS, frozenset()):
        inner.bound.add(_text(parameter))
    # Decorators, defaults and annotations are evaluated where the def stands; the body inside.
    return [
        *tasks,
        *_py_load(scope, [_field(node, "return_type")]),
        *_py_load(inner, [_field(node, "body")]),
    ]


def _py_parameters(inner: _PyScope, parameters: _Node | None) -> list[_PyTask]:
    """Binds the parameter names in `inner`; defaults and annotations are read outside it."""
    outer = inner.parent
    if parameters is None or outer is None:
        return []
    tasks: list[_PyTask] = []
    for parameter in parameters.named_children:
        name = _py_parameter_name(parameter)
        if name is not None:
            inner.bound.add(_text(name))
        tasks += _py_load(outer, [_field(parameter, "type"), _field(parameter, "value")])
    return tasks


def _py_parameter_name(parameter: _Node) -> _Node | None:
    if parameter.type == "identifier":
        return parameter
    named = _field(parameter, "name")
    if named is not None:
        return named
    # typed_parameter, *args, **kwargs: the identifier is a plain child.
    for child in parameter.named_children:
        if child.type in ("identifier", "list_splat_pattern", "dictionary_splat_pattern"):
            return _py_parameter_name(child)
    return None


def _py_first_parameter(parameters: _Node | None) -> str | None:
    first = next(iter(parameters.named_children), None) if parameters is not None else None
    if first is None or first.type in ("list_splat_pattern", "dictionary_splat_pattern"):
        return None
    name = _py_parameter_name(first)
    return None if name is None else _text(name)


def _py_is_static(node: _Node) -> bool:
    parent = node.parent
    if parent is None or parent.type != "decorated_definition":
        return False
    decorators = (c for c in parent.named_children if c.type == "decorator")
    return any(_text(d).lstrip("@").strip() == "staticmethod" for d in decorators)


def _py_class(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    name = _field(node, "name")
    inner = _PyScope(_PyKind.CLASS, scope)
    if name is not None:
        found.add(_PyOcc.BIND, _first_row(name), scope, _text(name))
        inner.qualified = _py_qualified(scope, _text(name))
        scope.classes[_text(name)] = inner
    tasks: list[_PyTask] = []
    superclasses = _field(node, "superclasses")
    for base in superclasses.named_children if superclasses is not None else ():
        if base.type == "keyword_argument":  # metaclass=M
            tasks += _py_load(scope, [_field(base, "value")])
            continue
        tasks += _py_load(scope, [base])
        base_name = _py_base_name(base)
        if base_name is not None:
            inner.bases.append(base_name)
    return [*tasks, *_py_load(inner, [_field(node, "body")])]


def _py_base_name(base: _Node | None) -> str | None:
    """`Base`, `mod.Base` and `Base[T]` all name Base."""
    if base is not None and base.type == "subscript":
        base = _field(base, "value")
    if base is not None and base.type == "attribute":
        base = _field(base, "attribute")
    return _text(base) if base is not None and base.type == "identifier" else None


def _py_qualified(scope: _PyScope, name: str) -> str | None:
    """A class's project-level name; None inside a function, where no other module sees it."""
    if scope.kind is _PyKind.MODULE:
        return name
    if scope.kind is _PyKind.CLASS and scope.qualified is not None:
        return f"{scope.qualified}.{name}"
    return None


def _py_lambda(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    inner = _PyScope(_PyKind.FUNCTION, scope)
    tasks = _py_parameters(inner, _field(node, "parameters"))
    return [*tasks, *_py_load(inner, [_field(node, "body")])]


def _py_comprehension(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    """Its own scope: the targets are local to it; the first iterable is read outside."""
    inner = _PyScope(_PyKind.FUNCTION, scope, comprehension=True)
    tasks: list[_PyTask] = []
    first = True
    for child in node.named_children:
        if child.type != "for_in_clause":
            tasks += _py_load(inner, [child])
            continue
        left, right = _field(child, "left"), _field(child, "right")
        if left is not None:
            tasks.append((left, inner, _PyCtx.STORE))
        tasks += _py_load(scope if first else inner, [right])
        first = False
    return tasks


def _py_assignment(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    left = _field(node, "left")
    targets = [] if left is None else [(left, scope, _PyCtx.STORE)]
    return [*targets, *_py_load(scope, [_field(node, "type"), _field(node, "right")])]


def _py_augmented(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    """`x += 1` reads x and makes it local, but defines nothing new: it needs x's definition."""
    left = _field(node, "left")
    if left is not None and left.type == "identifier":
        scope.bound.add(_text(left))
    return _py_load(scope, [left, _field(node, "right")])


def _py_for(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    left = _field(node, "left")
    rest = _py_other_children(node, "left")
    return [*([] if left is None else [(left, scope, _PyCtx.STORE)]), *_py_load(scope, rest)]


def _py_as(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    """`with open(p) as f`, `except E as e`: the alias is bound."""
    alias = _field(node, "alias")
    rest = _py_other_children(node, "alias")
    return [*([] if alias is None else [(alias, scope, _PyCtx.STORE)]), *_py_load(scope, rest)]


def _py_other_children(node: _Node, excluded: str) -> list[_Node]:
    """The named children outside field `excluded` (nodes are compared by field, because the
    binding hands out a new wrapper object at every access)."""
    return [c for f, c in _fields(node) if c.is_named and f != excluded]


def _py_walrus(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    target = scope
    while target.comprehension and target.parent is not None:
        target = target.parent
    name = _field(node, "name")
    return [
        *([] if name is None else [(name, target, _PyCtx.STORE)]),
        *_py_load(scope, [_field(node, "value")]),
    ]


def _py_declaration(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    """`global X` reads the module's X (and makes X = ... define it); `nonlocal` reads a local."""
    for name in (c for c in node.named_children if c.type == "identifier"):
        if node.type == "global_statement":
            scope.declared_global.add(_text(name))
            found.add(_PyOcc.REFER, _first_row(name), scope, _text(name))
        else:
            scope.declared_nonlocal.add(_text(name))
    return ()


def _py_delete(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    """`del x` makes x local to a function (and defines nothing); `del a.b` reads a."""
    targets = [
        t
        for c in node.named_children
        for t in (c.named_children if c.type == "expression_list" else [c])
    ]
    for target in targets:
        if target.type == "identifier":
            scope.bound.add(_text(target))
    return _py_load(scope, [t for t in targets if t.type != "identifier"])


def _py_import(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    """`import a.b` binds a; `from m import a` binds a; `... as c` binds c. Every name in the
    statement is also used: it refers to a module or a module-level name elsewhere."""
    from_import = node.type == "import_from_statement"
    for leaf in _leaves(_field(node, "module_name"), _PY_IDENTS, frozenset()):
        found.add(_PyOcc.IMPORTED, _first_row(leaf), scope, _text(leaf))
    for name in node.children_by_field_name("name"):
        alias = _field(name, "alias")
        dotted = _field(name, "name") if alias is not None else name
        parts = [] if dotted is None else list(dotted.named_children)
        for part in parts:
            found.add(_PyOcc.IMPORTED, _first_row(part), scope, _text(part))
        bound = alias or _py_import_bound(parts, from_import)
        if bound is not None:
            found.add(_PyOcc.BIND, _first_row(bound), scope, _text(bound))
            scope.imports[_text(bound)] = from_import
    return ()


def _py_import_bound(parts: Sequence[_Node], from_import: bool) -> _Node | None:
    """`import a.b` binds a, `from m import a` binds a."""
    if not parts:
        return None
    return parts[-1] if from_import else parts[0]


def _py_case(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    patterns = [c for c in node.named_children if c.type == "case_pattern"]
    return [
        *_py_patterns(scope, patterns),
        *_py_load(scope, [c for c in node.named_children if c.type != "case_pattern"]),
    ]


def _py_type_alias(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    """`type Alias[T] = ...` binds Alias."""
    name = next(_leaves(_field(node, "left"), _PY_IDENTS, frozenset()), None)
    if name is not None:
        found.add(_PyOcc.BIND, _first_row(name), scope, _text(name))
    return _py_load(scope, [_field(node, "right")])


def _py_keyword_argument(found: _PyFound, node: _Node, scope: _PyScope) -> Iterable[_PyTask]:
    """`f(timeout=5)`: timeout names the callee's parameter, no name in scope."""
    return _py_load(scope, [_field(node, "value")])


_PY_VISITORS: dict[str, _PyVisit] = {
    "function_definition": _py_function,
    "class_definition": _py_class,
    "lambda": _py_lambda,
    **dict.fromkeys(
        (
            "list_comprehension",
            "set_comprehension",
            "dictionary_comprehension",
            "generator_expression",
        ),
        _py_comprehension,
    ),
    "attribute": _py_attribute,
    "keyword_argument": _py_keyword_argument,
    "assignment": _py_assignment,
    "augmented_assignment": _py_augmented,
    "for_statement": _py_for,
    "as_pattern": _py_as,
    "named_expression": _py_walrus,
    "global_statement": _py_declaration,
    "nonlocal_statement": _py_declaration,
    "delete_statement": _py_delete,
    "import_statement": _py_import,
    "import_from_statement": _py_import,
    # A compiler directive: it binds no name any other code looks for.
    "future_import_statement": lambda found, node, scope: (),
    "case_clause": _py_case,
    "type_alias_statement": _py_type_alias,
}


# Occurrences from the scan ----------------------------------------------------------------------
# Without a tree, statements come from the blanked text (a statement runs on while brackets are
# open or a line ends with a backslash) and blocks from indentation: a def or class header opens
# a scope that holds every later statement indented deeper than the header.


@dataclass(frozen=True)
class _PyStatement:
    row: int  # its first row
    indent: int
    text: str  # its blanked lines joined with "\n", columns kept
    starts: tuple[int, ...]  # where each of its rows starts in `text`

    def row_at(self, offset: int) -> int:
        return self.row + bisect.bisect_right(self.starts, offset) - 1

    @functools.cached_property
    def depths(self) -> list[int]:
        """The bracket depth before each character (and at the end)."""
        depths, depth = [0], 0
        for char in self.text:
            depth = max(0, depth + (char in "([{") - (char in ")]}"))
            depths.append(depth)
        return depths

    @functools.cached_property
    def locals(self) -> frozenset[str]:
        """Lambda parameters and comprehension targets: local to a part of the statement, so
        the scan, which cannot tell which part, takes them to be local to all of it."""
        found: set[str] = set()
        for match in re.finditer(r"\blambda\b([^:]*):", self.text):
            for chunk, _ in _chunks(match.group(1), 0):
                found.update(_IDENT.findall(chunk.split("=")[0])[:1])
        for match in re.finditer(r"\bfor\b(.*?)\bin\b", self.text, re.DOTALL):
            if self.depths[match.start()] > 0:
                found.update(_IDENT.findall(match.group(1)))
        return frozenset(found)


def _py_statements(clean: list[str]) -> Iterator[_PyStatement]:
    rows: list[int] = []
    depth = 0
    for row, line in enumerate(clean):
        if not rows and not line.strip():
            continue
        header = re.match(r"\s*(?:async\s+)?(?:def|class)\s", line)
        if rows and depth > 0 and header and _indent(line) <= _indent(clean[rows[0]]):
            # An unclosed bracket (broken code) ends at the next definition, not at the end.
            yield _py_statement(clean, rows)
            rows, depth = [], 0
        rows.append(row)
        for char in line:
            depth = max(0, depth + (char in "([{") - (char in ")]}"))
        if depth == 0 and not line.rstrip().endswith("\\"):
            yield _py_statement(clean, rows)
            rows = []
    if rows:
        yield _py_statement(clean, rows)


def _py_statement(clean: list[str], rows: list[int]) -> _PyStatement:
    lines = [clean[row] for row in rows]
    starts = tuple(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    return _PyStatement(rows[0], _indent(lines[0]), "\n".join(lines), starts)


def _py_scan_found(content: bytes) -> _PyFound:
    found = _PyFound(_PyScope(_PyKind.MODULE, None))
    blocks: list[tuple[int, _PyScope]] = []  # (header indent, scope) of the open def/class blocks
    static = False  # the def ahead is decorated with @staticmethod
    for statement in _py_statements(_scan_text(_PY_STRIP, content).clean):
        while blocks and statement.indent <= blocks[-1][0]:
            blocks.pop()
        scope = blocks[-1][1] if blocks else found.module
        inner = _PyScan(found, statement).statement(scope, 0, static)
        static = re.match(r"\s*@\s*staticmethod\b", statement.text) is not None or (
            static and statement.text.lstrip().startswith("@")
        )
        if inner is not None:
            blocks.append((statement.indent, inner))
    return found


_PY_COMPOUND = re.compile(r"\s*(?:async\s+)?(if|elif|else|while|try|finally|for|with|except)\b")
_PY_SOFT_HEADER = re.compile(r"\s*(match|case)\b(?!\s*[=.,:)\]])")
_PY_AS = re.compile(rf"\bas\s+(\([^)]*\)|\[[^\]]*\]|{_NAME}(?:\s*\.\s*{_NAME})*)")
_PY_AFTER_NAME = re.compile(r"\s*(:=|==|=)")
_PY_WORD = re.compile(
    r"(?<![\w.])(?:(?P<obj>[A-Za-z_]\w*)\s*\.\s*(?P<attr>[A-Za-z_]\w*)|(?P<name>[A-Za-z_]\w*))"
    r"|\.\s*[A-Za-z_]\w*"  # an attribute of no plain name: f().x, the c of a.b.c
)


@dataclass(frozen=True)
class _PyScan:
    """Reads one statement's occurrences into `found`."""

    found: _PyFound
    stm: _PyStatement

    def add(self, kind: _PyOcc, at: int, scope: _PyScope, name: str, member: str = "") -> None:
        self.found.add(kind, self.stm.row_at(at), scope, name, member)

    def statement(self, scope: _PyScope, at: int, static: bool = False) -> _PyScope | None:
        """The statement (or an inline body) from `at` on; the scope it opens, if any."""
        text = self.stm.text
        definition = re.compile(rf"\s*(?:async\s+)?(def|class)\s+({_NAME})").match(text, at)
        if definition is not None:
            self.add(_PyOcc.BIND, definition.start(2), scope, definition.group(2))
            if definition.group(1) == "def":
                return self.function(scope, definition, static)
            return self.cls(scope, definition)
        if re.compile(r"\s*(import|from)\s").match(text, at):
            self.imports(scope, at)
        elif (declared := re.compile(r"\s*(global|nonlocal)\s").match(text, at)) is not None:
            self.declaration(scope, declared)
        elif (deletion := re.compile(r"\s*del\s").match(text, at)) is not None:
            self.delete(scope, deletion.end())
        elif (compound := _PY_COMPOUND.match(text, at)) is not None:
            self.compound(scope, compound)
        elif (soft := _PY_SOFT_HEADER.match(text, at)) and text.rstrip().endswith(":"):
            colon = self.colon(soft.end()) or len(text)
            if soft.group(1) == "case":
                self.pattern(scope, soft.end(), colon)
            else:
                self.load(scope, soft.end(), colon)
        elif alias := re.compile(rf"\s*type\s+({_NAME})\s*(?:\[[^\]]*\])?\s*=").match(text, at):
            self.add(_PyOcc.BIND, alias.start(1), scope, alias.group(1))
            self.load(scope, alias.end(), len(text))
        else:
            self.simple(scope, at)
        return None

    def colon(self, at: int) -> int | None:
        """Where the header from `at` on ends: its first `:` outside brackets (not `:=`)."""
        for match in re.finditer(r":(?!=)", self.stm.text[at:]):
            if self.stm.depths[at + match.start()] == 0:
                return at + match.start()
        return None

    def inline(self, scope: _PyScope, colon: int | None) -> None:
        """`if x: y = 1`: the body after the header's colon."""
        if colon is not None and self.stm.text[colon + 1 :].strip():
            self.statement(scope, colon + 1)

    def function(self, scope: _PyScope, header: re.Match[str], static: bool) -> _PyScope:
        method = scope.kind is _PyKind.CLASS
        inner = _PyScope(_PyKind.FUNCTION, scope, owner=scope if method else None)
        text = self.stm.text
        opening = text.find("(", header.end())
        if opening < 0:
            return inner
        names = self.parameters(scope, inner, opening + 1)
        if method and not static and names:
            inner.self_name = names[0]
        closing = self._closing(opening)
        colon = self.colon(closing)
        self.load(scope, closing, len(text) if colon is None else colon)  # the return annotation
        self.inline(inner, colon)
        return inner

    def _closing(self, opening: int) -> int:
        depths = self.stm.depths
        for index in range(opening + 1, len(self.stm.text)):
            if depths[index + 1] == depths[opening]:
                return index + 1
        return len(self.stm.text)

    def parameters(self, outer: _PyScope, inner: _PyScope, at: int) -> list[str]:
        """Binds a parameter list's names in `inner`; defaults and annotations are read in
        `outer`. The names, in order (none for a leading `*args`)."""
        names: list[str] = []
        for chunk, start in _chunks(self.stm.text[at:], at):
            name = re.match(rf"\s*(\*{{0,2}})\s*({_NAME})", chunk)
            if name is None:
                continue
            inner.bound.add(name.group(2))
            names.append("" if name.group(1) else name.group(2))
            # The annotation and the default apart: `x: Type = DEFAULT` is no keyword argument.
            default = re.compile(r"=(?!=)").search(chunk, name.end())
            middle = len(chunk) if default is None else default.start()
            self.load(outer, start + name.end(), start + middle)
            self.load(outer, start + middle, start + len(chunk))
        return [n for n in names[:1] if n]

    def cls(self, scope: _PyScope, header: re.Match[str]) -> _PyScope:
        name = header.group(2)
        inner = _PyScope(_PyKind.CLASS, scope, qualified=_py_qualified(scope, name))
        scope.classes[name] = inner
        text = self.stm.text
        bases = re.compile(r"\s*(?:\[[^\]]*\]\s*)?\(").match(text, header.end())
        end = header.end()
        if bases is not None:
            for chunk, start in _chunks(text[bases.end() :], bases.end()):
                keyword = re.match(rf"\s*{_NAME}\s*=(?!=)", chunk)
                skip = 0 if keyword is None else keyword.end()
                self.load(scope, start + skip, start + len(chunk))
                dotted = re.match(r"\s*([\w.]+)\s*(?:\[.*)?$", chunk, re.DOTALL)
                if keyword is None and dotted is not None:
                    inner.bases.append(dotted.group(1).split(".")[-1])
            end = self._closing(bases.end() - 1)
        self.inline(inner, self.colon(end))
        return inner

    def imports(self, scope: _PyScope, at: int) -> None:
        text = self.stm.text
        from_import = re.compile(r"\s*from\s+([\w.\s]*?)\s*\bimport\b").match(text, at)
        if from_import is not None:
            if from_import.group(1).strip() == "__future__":
                return  # a compiler directive (see _PY_VISITORS)
            self.imported(scope, from_import.start(1), from_import.group(1))
            names = from_import.end()
        else:
            names = re.compile(r"\s*import\b").match(text, at).end()  # type: ignore[union-attr]
        for chunk, start in _chunks(text[names:].replace("(", " ").replace(")", " "), names):
            alias = re.search(rf"\bas\s+({_NAME})", chunk)
            dotted = chunk[: alias.start()] if alias else chunk
            parts = list(_IDENT.finditer(dotted))
            self.imported(scope, start, dotted)
            bound = alias.start(1) if alias else None
            if alias is None and parts:
                bound = (parts[-1] if from_import else parts[0]).start()
            if bound is not None:
                name = _IDENT.match(chunk, bound).group()  # type: ignore[union-attr]
                self.add(_PyOcc.BIND, start + bound, scope, name)
                scope.imports[name] = from_import is not None

    def imported(self, scope: _PyScope, at: int, text: str) -> None:
        for part in _IDENT.finditer(text):
            if part.group() not in _PY_RESERVED:
                self.add(_PyOcc.IMPORTED, at + part.start(), scope, part.group())

    def declaration(self, scope: _PyScope, header: re.Match[str]) -> None:
        for name in _IDENT.finditer(self.stm.text, header.end()):
            if header.group(1) == "global":
                scope.declared_global.add(name.group())
                self.add(_PyOcc.REFER, name.start(), scope, name.group())
            else:
                scope.declared_nonlocal.add(name.group())

    def delete(self, scope: _PyScope, at: int) -> None:
        for chunk, start in _chunks(self.stm.text[at:], at):
            bare = re.fullmatch(rf"\s*({_NAME})\s*", chunk)
            if bare is not None:
                scope.bound.add(bare.group(1))
            else:
                self.load(scope, start, start + len(chunk))

    def compound(self, scope: _PyScope, header: re.Match[str]) -> None:
        text, keyword = self.stm.text, header.group(1)
        colon = self.colon(header.end())
        end = len(text) if colon is None else colon
        if keyword == "for":
            within = next(
                (m for m in re.finditer(r"\bin\b", text[:end]) if self.stm.depths[m.start()] == 0),
                None,
            )
            if within is not None:
                self.store(scope, header.end(), within.start())
                self.load(scope, within.end(), end)
            else:
                self.load(scope, header.end(), end)
        elif keyword in ("with", "except"):
            position = header.end()
            for alias in _PY_AS.finditer(text, 0, end):
                if alias.start() < position:
                    continue
                self.load(scope, position, alias.start())
                self.store(scope, alias.start(1), alias.end(1))
                position = alias.end()
            self.load(scope, position, end)
        else:
            self.load(scope, header.end(), end)
        self.inline(scope, colon)

    def pattern(self, scope: _PyScope, at: int, end: int) -> None:
        """A case pattern: bare names capture; names before `(` or `.` are read (a class, a
        value); `x=` names an attribute; the guard after `if` is read."""
        text = self.stm.text
        guard = re.compile(r"\bif\b").search(text, at, end)
        stop = end if guard is None else guard.start()
        for word in _PY_WORD.finditer(text, at, stop):
            if word.group("obj") is not None:
                self.member(scope, word, _PyOcc.MEMBER)
            elif (name := word.group("name")) is not None and name not in _PY_RESERVED:
                following = text[word.end() : stop].lstrip()[:1]
                if following in ("(", "["):
                    self.add(_PyOcc.REFER, word.start(), scope, name)
                elif following != "=" and name != "_":
                    self.add(_PyOcc.BIND, word.start(), scope, name)
        if guard is not None:
            self.load(scope, guard.end(), end)

    def simple(self, scope: _PyScope, at: int) -> None:
        """An expression statement or an assignment (chained, annotated or augmented)."""
        text, depths = self.stm.text, self.stm.depths
        lam = re.compile(r"\blambda\b").search(text, at)
        limit = len(text) if lam is None else lam.start()
        operators = [
            m
            for m in re.finditer(
                r"(?<![=!<>:+\-*/%@&|^])(?:(?:\*\*|//|>>|<<|[-+*/%@&|^])=|=)(?!=)", text[:limit]
            )
            if m.start() >= at and depths[m.start()] == 0
        ]
        if operators and operators[0].group() != "=":  # `x += 1`
            target = re.fullmatch(rf"\s*({_NAME})\s*", text[at : operators[0].start()])
            if target is not None:
                scope.bound.add(target.group(1))
            self.load(scope, at, len(text))
            return
        annotation = self.colon(at)
        ends = [m.start() for m in operators]
        if annotation is not None and (not ends or annotation < ends[0]):
            self.store(scope, at, annotation)  # `x: int = 3`, `x: int`
            self.load(scope, annotation + 1, ends[0] if ends else len(text))
            at = ends[0] + 1 if ends else len(text)
            ends = ends[1:]
        for end in ends:
            self.store(scope, at, end)
            at = end + 1
        self.load(scope, at, len(text))

    def store(self, scope: _PyScope, at: int, end: int) -> None:
        """Assignment targets: `a`, `a, (b, *c)`, `self.x` bind; `a[i]`, `f().x` are read."""
        text = self.stm.text
        for chunk, start in _chunks(text[at:end], at):
            inner = re.fullmatch(r"\s*\*?\s*[(\[](.*)[)\]]\s*", chunk, re.DOTALL)
            bare = re.fullmatch(rf"\s*\*?\s*({_NAME})\s*", chunk)
            member = re.fullmatch(rf"\s*({_NAME})\s*\.\s*({_NAME})\s*", chunk)
            if inner is not None:
                self.store(scope, start + inner.start(1), start + inner.end(1))
            elif bare is not None and bare.group(1) not in _PY_RESERVED:
                self.add(_PyOcc.BIND, start + bare.start(1), scope, bare.group(1))
            elif member is not None:
                word = _PY_WORD.match(text, start + member.start(1))
                if word is not None:
                    self.member(scope, word, _PyOcc.MEMBER_STORE)
            else:
                self.load(scope, start, start + len(chunk))

    def member(self, scope: _PyScope, word: re.Match[str], kind: _PyOcc) -> None:
        obj, attr = word.group("obj"), word.group("attr")
        if obj in _PY_RESERVED or obj in self.stm.locals:
            return
        self.add(_PyOcc.REFER, word.start("obj"), scope, obj)
        self.add(kind, word.start("attr"), scope, obj, attr)

    def load(self, scope: _PyScope, at: int, end: int) -> None:
        """Every name read from `at` to `end`."""
        text, depths = self.stm.text, self.stm.depths
        for word in _PY_WORD.finditer(text, at, end):
            if word.group("obj") is not None:
                self.member(scope, word, _PyOcc.MEMBER)
                continue
            name = word.group("name")
            if name is None or name in _PY_RESERVED or name in self.stm.locals:
                continue
            after = _PY_AFTER_NAME.match(text, word.end(), end)
            if after is not None and after.group(1) == ":=":
                self.add(_PyOcc.BIND, word.start(), scope, name)
            elif after is not None and after.group(1) == "=" and depths[word.start()] > 0:
                continue  # a keyword argument names the callee's parameter
            else:
                self.add(_PyOcc.REFER, word.start(), scope, name)
