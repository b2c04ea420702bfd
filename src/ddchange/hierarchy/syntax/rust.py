"""The binders of Rust: items, `let` patterns, parameters, `use` trees."""

from __future__ import annotations

from collections.abc import Iterator

from ddchange.hierarchy.syntax.binding import (
    _BIND_NAME,
    _DEFINE_NAME,
    _Bind,
    _Binder,
    _pattern_binder,
    _Role,
)
from ddchange.hierarchy.syntax.tree import _field, _Node

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
