"""The binders of Java: classes, methods, fields, locals and parameters, imports."""

from __future__ import annotations

from collections.abc import Iterator

from ddchange.hierarchy.syntax.binding import (
    _BIND_NAME,
    _DEFINE_NAME,
    _Bind,
    _Binder,
    _binder,
    _leaves,
    _pattern_binder,
    _Role,
)
from ddchange.hierarchy.syntax.tree import _field, _Node

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
