"""The binders of Go: declarations, functions and methods, parameters, imports."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ddchange.hierarchy.syntax.binding import (
    _BIND_NAME,
    _DEFINE_NAME,
    _Bind,
    _Binder,
    _pattern_binder,
    _Role,
    _scoped_binder,
)
from ddchange.hierarchy.syntax.tree import _field, _Node, _text

# Go --------------------------------------------------------------------------------------------

_GO_IDENTS = frozenset({"identifier", "type_identifier", "field_identifier", "package_identifier"})


_GO_FUNCTIONS = frozenset({"function_declaration", "method_declaration", "func_literal"})


def _go_import(node: _Node) -> Iterator[_Bind]:
    """`str "strings"` defines str; `"net/http"` defines http (a package's usual name)."""
    alias = _field(node, "name")
    path = _field(node, "path")
    if alias is not None:
        if alias.type == "package_identifier":
            yield _Bind(alias, _Role.DEFINE)
    elif path is not None:
        parts = _text(path).strip('"`').split("/")
        # Module major versions (".../v2") are no part of the package name.
        if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
            parts.pop()
        yield _Bind(path, _Role.DEFINE, parts[-1])


_GO_BINDERS: dict[str, _Binder] = {
    "function_declaration": _DEFINE_NAME,
    "method_declaration": _DEFINE_NAME,
    "type_spec": _DEFINE_NAME,
    "type_alias": _DEFINE_NAME,
    "field_declaration": _DEFINE_NAME,
    "method_elem": _DEFINE_NAME,
    "method_spec": _DEFINE_NAME,
    "parameter_declaration": _BIND_NAME,
    "variadic_parameter_declaration": _BIND_NAME,
    "type_parameter_declaration": _BIND_NAME,
    "const_spec": _scoped_binder("name", _GO_IDENTS, _GO_FUNCTIONS),
    "var_spec": _scoped_binder("name", _GO_IDENTS, _GO_FUNCTIONS),
    "short_var_declaration": _pattern_binder("left", _Role.BIND, _GO_IDENTS),
    "range_clause": _pattern_binder("left", _Role.BIND, _GO_IDENTS),
    "import_spec": _go_import,
    "package_clause": _pattern_binder(None, _Role.BIND, frozenset({"package_identifier"})),
}
