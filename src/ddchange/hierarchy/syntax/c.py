"""The binders of C and C++: declarators (functions, variables, typedefs, parameters), records
(struct, union, enum), function bodies' locals, and macros.
"""

from __future__ import annotations

from collections.abc import Iterator

from ddchange.hierarchy.syntax.binding import (
    BIND_NAME,
    DEFINE_NAME,
    Bind,
    Binder,
    Role,
    merge,
    pattern_binder,
)
from ddchange.hierarchy.syntax.tree import Node, _field, has_ancestor

# C and C++ -------------------------------------------------------------------------------------

C_IDENTS = frozenset({"identifier", "type_identifier", "field_identifier"})


CPP_IDENTS = C_IDENTS | {"namespace_identifier"}


_C_FUNCTIONS = frozenset({"function_definition", "lambda_expression"})


def c_declared(declarator: Node | None) -> Node | None:
    """The identifier a C declarator declares: `*names[10]` -> names, `A::f` -> f."""
    while declarator is not None and declarator.type not in C_IDENTS:
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


def _c_declarators(role: Role | None) -> Binder:
    """Names declared by a declaration; `role` None: global ones define, local ones bind."""

    def bind(node: Node) -> Iterator[Bind]:
        actual = role or (Role.BIND if has_ancestor(node, _C_FUNCTIONS) else Role.DEFINE)
        for declarator in node.children_by_field_name("declarator"):
            leaf = c_declared(declarator)
            if leaf is not None:
                yield Bind(leaf, actual)

    return bind


def _c_record(node: Node) -> Iterator[Bind]:
    """`struct point {...}` defines point; `struct point *p` only uses it."""
    if _field(node, "body") is not None:
        leaf = c_declared(_field(node, "name"))
        if leaf is not None:
            yield Bind(leaf, Role.DEFINE)


def _c_function(node: Node) -> Iterator[Bind]:
    leaf = c_declared(_field(node, "declarator"))
    if leaf is not None:
        yield Bind(leaf, Role.DEFINE)


C_BINDERS: dict[str, Binder] = {
    "function_definition": _c_function,
    "declaration": _c_declarators(None),
    "field_declaration": _c_declarators(Role.DEFINE),
    "type_definition": _c_declarators(Role.DEFINE),
    "parameter_declaration": _c_declarators(Role.BIND),
    "optional_parameter_declaration": _c_declarators(Role.BIND),
    "struct_specifier": _c_record,
    "union_specifier": _c_record,
    "enum_specifier": _c_record,
    "enumerator": DEFINE_NAME,
    "preproc_def": DEFINE_NAME,
    "preproc_function_def": merge(DEFINE_NAME, pattern_binder("parameters", Role.BIND, C_IDENTS)),
}


CPP_BINDERS: dict[str, Binder] = {
    **C_BINDERS,
    "class_specifier": _c_record,
    "namespace_definition": pattern_binder("name", Role.DEFINE, CPP_IDENTS),
    "alias_declaration": DEFINE_NAME,
    "type_parameter_declaration": pattern_binder(None, Role.BIND, CPP_IDENTS),
    "optional_type_parameter_declaration": BIND_NAME,
}
