"""Scopes from the tree: every definition of a file with its kind, qualified name and lines
(`tree_scopes`), the language-specific ways a definition names itself (C declarators, Go
receivers, Rust impl blocks, JavaScript functions bound to names).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from ddchange.hierarchy.syntax.base import Scope
from ddchange.hierarchy.syntax.binding import Grammar
from ddchange.hierarchy.syntax.c import c_declared
from ddchange.hierarchy.syntax.grammars import GRAMMARS, _parse
from ddchange.hierarchy.syntax.tree import Node, _field, _text, first_row, last_row

# --- scopes from the tree ---------------------------------------------------------------------

_ScopeName = Callable[[Node], "tuple[str, str] | None"]  # node -> (name, kind override or "")


# A function nested directly in one of these is a method.
_CLASS_LIKE = frozenset({"class", "struct", "union", "enum", "interface", "trait", "impl"})


@functools.lru_cache(maxsize=16)
def tree_scopes(lang: str, content: bytes) -> tuple[Scope, ...] | None:
    """Every definition in `content`, outer first; None when tree-sitter fails on it. Cached:
    grouping asks about the same file hunk after hunk, and the walk visits every node."""
    root = _parse(lang, content)
    if root is None:
        return None
    grammar = GRAMMARS[lang]
    found: list[Scope] = []
    stack: list[tuple[Node, Scope | None]] = [(root, None)]
    while stack:
        node, outer = stack.pop()
        scope = _scope_of(grammar, node, outer)
        if scope is not None:
            found.append(scope)
        stack.extend((child, scope or outer) for child in node.named_children)
    return tuple(sorted(found, key=lambda s: (s.start, -s.end)))


def _scope_of(grammar: Grammar, node: Node, outer: Scope | None) -> Scope | None:
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
    return Scope(
        kind=kind, name=name, start=_scope_start(grammar, node) + 1, end=last_row(node) + 1
    )


def _scope_start(grammar: Grammar, node: Node) -> int:
    """The first row of a definition, counting its decorators, template head and attributes."""
    while node.parent is not None and node.parent.type in grammar.wrappers:
        node = node.parent
    start = first_row(node)
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type in grammar.leading and last_row(sibling) < start:
        start = first_row(sibling)
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


def _plain_name(node: Node) -> tuple[str, str] | None:
    name = _field(node, "name")
    return None if name is None else (_bare(_text(name)), "")


def _c_function_name(node: Node) -> tuple[str, str] | None:
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


def _c_record_name(node: Node) -> tuple[str, str] | None:
    """A struct/union/enum/class with a body; an anonymous one takes its typedef's name."""
    if _field(node, "body") is None:
        return None  # a use such as `struct point *p`, or a forward declaration
    named = _plain_name(node)
    parent = node.parent
    if named is None and parent is not None and parent.type == "type_definition":
        alias = _field(parent, "declarator")
        declared = c_declared(alias)
        return None if declared is None else (_text(declared), "")
    return named


def _named_with_body(node: Node) -> tuple[str, str] | None:
    """Declarations without a body (`mod foo;`, abstract methods) span no lines worth grouping."""
    return None if _field(node, "body") is None else _plain_name(node)


def _go_method_name(node: Node) -> tuple[str, str] | None:
    """`func (p *Point) Move()` -> ("Point.Move", "")."""
    name = _field(node, "name")
    receiver = _field(node, "receiver")
    params = [] if receiver is None else list(receiver.named_children)
    kind = _field(params[0], "type") if params else None
    if name is None:
        return None
    return (_text(name) if kind is None else f"{_bare(_text(kind))}.{_text(name)}"), ""


def _go_type_name(node: Node) -> tuple[str, str] | None:
    name = _field(node, "name")
    body = _field(node, "type")
    kind = {"struct_type": "struct", "interface_type": "interface"}.get(
        "" if body is None else body.type, "type"
    )
    return None if name is None else (_text(name), kind)


def _rust_impl_name(node: Node) -> tuple[str, str] | None:
    implemented = _field(node, "type")
    return None if implemented is None else (_bare(_text(implemented)), "")


_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)


def _js_bound_function(node: Node) -> tuple[str, str] | None:
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
