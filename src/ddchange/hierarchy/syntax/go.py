"""The binders of Go: declarations, functions and methods, parameters, imports."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ddchange.hierarchy.syntax.binding import (
    BIND_NAME,
    DEFINE_NAME,
    Bind,
    Binder,
    Role,
    pattern_binder,
    scoped_binder,
)
from ddchange.hierarchy.syntax.tree import Node, _field, _text

# Go --------------------------------------------------------------------------------------------

GO_IDENTS = frozenset({"identifier", "type_identifier", "field_identifier", "package_identifier"})


_GO_FUNCTIONS = frozenset({"function_declaration", "method_declaration", "func_literal"})


def _go_import(node: Node) -> Iterator[Bind]:
    """`str "strings"` defines str; `"net/http"` defines http (a package's usual name)."""
    alias = _field(node, "name")
    path = _field(node, "path")
    if alias is not None:
        if alias.type == "package_identifier":
            yield Bind(alias, Role.DEFINE)
    elif path is not None:
        parts = _text(path).strip('"`').split("/")
        # Module major versions (".../v2") are no part of the package name.
        if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
            parts.pop()
        yield Bind(path, Role.DEFINE, parts[-1])


GO_BINDERS: dict[str, Binder] = {
    "function_declaration": DEFINE_NAME,
    "method_declaration": DEFINE_NAME,
    "type_spec": DEFINE_NAME,
    "type_alias": DEFINE_NAME,
    "field_declaration": DEFINE_NAME,
    "method_elem": DEFINE_NAME,
    "method_spec": DEFINE_NAME,
    "parameter_declaration": BIND_NAME,
    "variadic_parameter_declaration": BIND_NAME,
    "type_parameter_declaration": BIND_NAME,
    "const_spec": scoped_binder("name", GO_IDENTS, _GO_FUNCTIONS),
    "var_spec": scoped_binder("name", GO_IDENTS, _GO_FUNCTIONS),
    "short_var_declaration": pattern_binder("left", Role.BIND, GO_IDENTS),
    "range_clause": pattern_binder("left", Role.BIND, GO_IDENTS),
    "import_spec": _go_import,
    "package_clause": pattern_binder(None, Role.BIND, frozenset({"package_identifier"})),
}
