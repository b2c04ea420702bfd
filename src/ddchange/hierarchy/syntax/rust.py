"""The binders of Rust: items, `let` patterns, parameters, `use` trees."""

from __future__ import annotations

from collections.abc import Iterator

from ddchange.hierarchy.syntax.binding import (
    BIND_NAME,
    DEFINE_NAME,
    Bind,
    Binder,
    Role,
    pattern_binder,
)
from ddchange.hierarchy.syntax.tree import Node, _field

# Rust ------------------------------------------------------------------------------------------

RUST_IDENTS = frozenset(
    {"identifier", "type_identifier", "field_identifier", "shorthand_field_identifier"}
)


def _rust_use(node: Node | None) -> Iterator[Bind]:
    """`use a::b::{c, d as e};` defines c and e, and uses everything it names."""
    if node is None:
        return
    if node.type == "identifier":
        yield Bind(node, Role.DEFINE_AND_USE)
    elif node.type == "scoped_identifier":
        yield from _rust_use(_field(node, "name"))
    elif node.type == "use_as_clause":
        alias = _field(node, "alias")
        if alias is not None:
            yield Bind(alias, Role.DEFINE)
    elif node.type == "scoped_use_list":
        yield from _rust_use(_field(node, "list"))
    elif node.type == "use_list":
        for child in node.named_children:
            yield from _rust_use(child)


RUST_BINDERS: dict[str, Binder] = {
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
        DEFINE_NAME,
    ),
    "parameter": pattern_binder("pattern", Role.BIND, RUST_IDENTS),
    "closure_parameters": pattern_binder(None, Role.BIND, RUST_IDENTS),
    "let_declaration": pattern_binder("pattern", Role.BIND, RUST_IDENTS),
    "for_expression": pattern_binder("pattern", Role.BIND, RUST_IDENTS),
    "type_parameter": BIND_NAME,
    "use_declaration": lambda n: _rust_use(_field(n, "argument")),
}
