"""The binders of Java: classes, methods, fields, locals and parameters, imports."""

from __future__ import annotations

from collections.abc import Iterator

from ddchange.hierarchy.syntax.binding import (
    BIND_NAME,
    DEFINE_NAME,
    Bind,
    Binder,
    Role,
    _binder,
    leaves,
    pattern_binder,
)
from ddchange.hierarchy.syntax.tree import Node, _field

# Java ------------------------------------------------------------------------------------------

JAVA_IDENTS = frozenset({"identifier", "type_identifier"})


def _java_declarators(role: Role) -> Binder:
    def bind(node: Node) -> Iterator[Bind]:
        for declarator in node.children_by_field_name("declarator"):
            yield from _binder("name", role)(declarator)

    return bind


def _java_import(node: Node) -> Iterator[Bind]:
    """`import a.b.C;` defines and uses C; `import a.b.*;` defines nothing."""
    if any(child.type == "asterisk" for child in node.children):
        return
    imported = next(iter(node.named_children), None)
    name = _field(imported, "name") if imported is not None else None
    leaf = name or imported
    if leaf is not None and leaf.type == "identifier":
        yield Bind(leaf, Role.DEFINE_AND_USE)


JAVA_BINDERS: dict[str, Binder] = {
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
        DEFINE_NAME,
    ),
    "field_declaration": _java_declarators(Role.DEFINE),
    "constant_declaration": _java_declarators(Role.DEFINE),
    "local_variable_declaration": _java_declarators(Role.BIND),
    "formal_parameter": BIND_NAME,
    "catch_formal_parameter": BIND_NAME,
    "spread_parameter": _java_declarators(Role.BIND),
    "inferred_parameters": pattern_binder(None, Role.BIND, JAVA_IDENTS),
    "lambda_expression": lambda n: (
        [Bind(p, Role.BIND)]
        if (p := _field(n, "parameters")) is not None and p.type == "identifier"
        else []
    ),
    "type_parameter": pattern_binder(None, Role.BIND, frozenset({"type_identifier"})),
    "import_declaration": _java_import,
    # A package or module clause names the file's own package: no reference to anything.
    "package_declaration": lambda n: (
        Bind(leaf, Role.BIND) for leaf in leaves(n, JAVA_IDENTS, frozenset())
    ),
}
