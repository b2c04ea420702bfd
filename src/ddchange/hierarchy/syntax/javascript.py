"""The binders of JavaScript and TypeScript: declarations, functions and classes, parameters and
destructuring patterns, imports.
"""

from __future__ import annotations

from collections.abc import Iterator

from ddchange.hierarchy.syntax.binding import (
    _BIND_NAME,
    _DEFINE_NAME,
    _Bind,
    _Binder,
    _binder,
    _pattern_binder,
    _Role,
    _scoped_binder,
)
from ddchange.hierarchy.syntax.tree import _field, _Node

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
