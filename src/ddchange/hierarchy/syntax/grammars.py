"""The registry of tree-sitter grammars (`_GRAMMARS`): for each language, the wheel that holds it,
its scope kinds, identifiers, binders and reserved words; and loading a parser from that wheel
lazily, so that a missing or broken wheel degrades that language alone (`_usable_language`,
`_parser`, `_parse`). A new language's tree-sitter support is a module of binders (like c.py)
and one entry here.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from ddchange.hierarchy.syntax.base import language_of, syntax_disabled
from ddchange.hierarchy.syntax.binding import _Grammar
from ddchange.hierarchy.syntax.c import _C_BINDERS, _C_IDENTS, _CPP_BINDERS, _CPP_IDENTS
from ddchange.hierarchy.syntax.go import _GO_BINDERS, _GO_IDENTS
from ddchange.hierarchy.syntax.java import _JAVA_BINDERS, _JAVA_IDENTS
from ddchange.hierarchy.syntax.javascript import _JS_IDENTS, _TS_IDENTS, _js_binders
from ddchange.hierarchy.syntax.rust import _RUST_BINDERS, _RUST_IDENTS
from ddchange.hierarchy.syntax.tree import _Node
from ddchange.hierarchy.syntax.words import (
    _C_BUILTIN_TYPES,
    _C_RESERVED,
    _CPP_RESERVED,
    _GO_BUILTIN_TYPES,
    _GO_RESERVED,
    _JAVA_RESERVED,
    _JS_RESERVED,
    _PY_IDENTS,
    _PY_RESERVED,
    _RUST_BUILTIN_TYPES,
    _RUST_RESERVED,
    _TS_BUILTIN_TYPES,
    _TS_RESERVED,
)


def _usable_language(path: str) -> str | None:
    lang = language_of(path)
    if lang is None or syntax_disabled() or _parser(lang) is None:
        return None
    return lang


@functools.cache
def _parser(lang: str) -> Any:
    """A tree-sitter parser for `lang`, or None when its wheel is missing or does not load."""
    module, factory = _GRAMMARS[lang].wheel
    try:
        # Imported by name, like the grammars, so that mypy checks this module the same way
        # whether or not the optional package is installed.
        binding = importlib.import_module("tree_sitter")
        grammar = getattr(importlib.import_module(module), factory)()
        return binding.Parser(binding.Language(grammar))
    # Any failure to load (wheel missing, ABI mismatch with the installed tree_sitter) means the
    # same thing: this language uses the fallback. That is the documented contract.
    except Exception:
        return None


@functools.lru_cache(maxsize=16)
def _parse(lang: str, content: bytes) -> _Node | None:
    """The root node of `content`. Cached: grouping asks about the same file hunk after hunk."""
    try:
        root: _Node = _parser(lang).parse(content).root_node
    # tree-sitter recovers from syntax errors by itself; anything raised here is an internal
    # failure of the C library, and the caller has a fallback for exactly that case.
    except Exception:
        return None
    return root


# The grammars ----------------------------------------------------------------------------------

_C_SCOPES = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "preproc_def": "macro",
    "preproc_function_def": "macro",
}


_JS_SCOPES = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    "variable_declarator": "function",
    "field_definition": "method",
}


_TS_SCOPES = {
    **_JS_SCOPES,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "module": "namespace",
    "type_alias_declaration": "type",
    "public_field_definition": "method",
}


def _ts(factory: str) -> _Grammar:
    return _Grammar(
        wheel=("tree_sitter_typescript", factory),
        separator=".",
        scope_kinds=_TS_SCOPES,
        identifiers=_TS_IDENTS,
        binders=_js_binders(_TS_IDENTS),
        ignored=_TS_RESERVED | _TS_BUILTIN_TYPES,
        wrappers=frozenset({"export_statement"}),
        leading=frozenset({"decorator"}),
    )


_GRAMMARS: dict[str, _Grammar] = {
    "python": _Grammar(
        wheel=("tree_sitter_python", "language"),
        separator=".",
        scope_kinds={"function_definition": "function", "class_definition": "class"},
        identifiers=_PY_IDENTS,
        binders={},  # Python's names are resolved by scope: see _py_names
        ignored=_PY_RESERVED,
        wrappers=frozenset({"decorated_definition"}),
    ),
    "c": _Grammar(
        wheel=("tree_sitter_c", "language"),
        separator=".",
        scope_kinds=_C_SCOPES,
        identifiers=_C_IDENTS,
        binders=_C_BINDERS,
        ignored=_C_RESERVED | _C_BUILTIN_TYPES,
    ),
    "cpp": _Grammar(
        wheel=("tree_sitter_cpp", "language"),
        separator="::",
        scope_kinds={**_C_SCOPES, "class_specifier": "class", "namespace_definition": "namespace"},
        identifiers=_CPP_IDENTS,
        binders=_CPP_BINDERS,
        ignored=_CPP_RESERVED | _C_BUILTIN_TYPES,
        wrappers=frozenset({"template_declaration"}),
    ),
    "javascript": _Grammar(
        wheel=("tree_sitter_javascript", "language"),
        separator=".",
        scope_kinds=_JS_SCOPES,
        identifiers=_JS_IDENTS,
        binders=_js_binders(_JS_IDENTS),
        ignored=_JS_RESERVED,
        wrappers=frozenset({"export_statement"}),
        leading=frozenset({"decorator"}),
    ),
    "typescript": _ts("language_typescript"),
    "tsx": _ts("language_tsx"),
    "go": _Grammar(
        wheel=("tree_sitter_go", "language"),
        separator=".",
        scope_kinds={
            "function_declaration": "function",
            "method_declaration": "method",
            "type_spec": "type",
        },
        identifiers=_GO_IDENTS,
        binders=_GO_BINDERS,
        ignored=_GO_RESERVED | _GO_BUILTIN_TYPES,
    ),
    "rust": _Grammar(
        wheel=("tree_sitter_rust", "language"),
        separator="::",
        scope_kinds={
            "function_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "union",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "namespace",
            "macro_definition": "macro",
        },
        identifiers=_RUST_IDENTS,
        binders=_RUST_BINDERS,
        ignored=_RUST_RESERVED | _RUST_BUILTIN_TYPES,
        leading=frozenset({"attribute_item"}),
    ),
    "java": _Grammar(
        wheel=("tree_sitter_java", "language"),
        separator=".",
        scope_kinds={
            "class_declaration": "class",
            "record_declaration": "class",
            "interface_declaration": "interface",
            "annotation_type_declaration": "interface",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "constructor_declaration": "method",
            "compact_constructor_declaration": "method",
        },
        identifiers=_JAVA_IDENTS,
        binders=_JAVA_BINDERS,
        ignored=_JAVA_RESERVED,
    ),
}
