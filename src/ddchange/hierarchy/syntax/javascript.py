"""The binders of JavaScript and TypeScript: declarations, functions and classes, parameters and
destructuring patterns, imports.
"""

from __future__ import annotations

from collections.abc import Iterator

from ddchange.hierarchy.syntax.binding import (
    BIND_NAME,
    DEFINE_NAME,
    Bind,
    Binder,
    Role,
    _binder,
    pattern_binder,
    scoped_binder,
)
from ddchange.hierarchy.syntax.tree import Node, _field

# JavaScript and TypeScript ---------------------------------------------------------------------

JS_IDENTS = frozenset(
    {
        "identifier",
        "property_identifier",
        "private_property_identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
    }
)


TS_IDENTS = JS_IDENTS | {"type_identifier"}


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


def _js_import_specifier(node: Node) -> Iterator[Bind]:
    """`{a as b}` defines b and uses a; `{a}` defines and uses a."""
    alias = _field(node, "alias")
    name = _field(node, "name")
    if alias is not None:
        yield Bind(alias, Role.DEFINE)
    elif name is not None:
        yield Bind(name, Role.DEFINE_AND_USE)


def js_binders(idents: frozenset[str]) -> dict[str, Binder]:
    parameters = pattern_binder(None, Role.BIND, idents)
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
        DEFINE_NAME,
    )
    return {
        **defines,
        "field_definition": _binder("property", Role.DEFINE),
        "function_expression": BIND_NAME,
        "class": BIND_NAME,
        "variable_declarator": scoped_binder("name", idents, _JS_FUNCTIONS),
        "formal_parameters": parameters,
        "arrow_function": pattern_binder("parameter", Role.BIND, idents),
        "catch_clause": pattern_binder("parameter", Role.BIND, idents),
        "type_parameter": BIND_NAME,
        "import_specifier": _js_import_specifier,
        "import_clause": lambda n: (
            Bind(c, Role.DEFINE) for c in n.named_children if c.type == "identifier"
        ),
        "namespace_import": pattern_binder(None, Role.DEFINE, idents),
    }
