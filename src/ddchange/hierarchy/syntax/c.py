"""The binders of C and C++: declarators (functions, variables, typedefs, parameters), records
(struct, union, enum), function bodies' locals, and macros.
"""

from __future__ import annotations

from collections.abc import Iterator

from ddchange.hierarchy.syntax.binding import (
    _BIND_NAME,
    _DEFINE_NAME,
    _Bind,
    _Binder,
    _merge,
    _pattern_binder,
    _Role,
)
from ddchange.hierarchy.syntax.tree import _field, _has_ancestor, _Node

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
