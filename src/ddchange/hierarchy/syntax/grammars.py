"""The registry of tree-sitter grammars (`GRAMMARS`): for each language, the wheel that holds it,
its scope kinds, identifiers, binders and reserved words; and loading a parser from that wheel
lazily, so that a missing or broken wheel degrades that language alone (`usable_language`,
`_parser`, `_parse`). A new language's tree-sitter support is a module of binders (like c.py)
and one entry here.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from ddchange.hierarchy.syntax.base import language_of, syntax_disabled
from ddchange.hierarchy.syntax.binding import Grammar
from ddchange.hierarchy.syntax.c import C_BINDERS, C_IDENTS, CPP_BINDERS, CPP_IDENTS
from ddchange.hierarchy.syntax.go import GO_BINDERS, GO_IDENTS
from ddchange.hierarchy.syntax.java import JAVA_BINDERS, JAVA_IDENTS
from ddchange.hierarchy.syntax.javascript import JS_IDENTS, TS_IDENTS, js_binders
from ddchange.hierarchy.syntax.rust import RUST_BINDERS, RUST_IDENTS
from ddchange.hierarchy.syntax.tree import Node
from ddchange.hierarchy.syntax.words import (
    C_BUILTIN_TYPES,
    C_RESERVED,
    CPP_RESERVED,
    GO_BUILTIN_TYPES,
    GO_RESERVED,
    JAVA_RESERVED,
    JS_RESERVED,
    PY_IDENTS,
    PY_RESERVED,
    RUST_BUILTIN_TYPES,
    RUST_RESERVED,
    TS_BUILTIN_TYPES,
    TS_RESERVED,
)


def usable_language(path: str) -> str | None:
    lang = language_of(path)
    if lang is None or syntax_disabled() or _parser(lang) is None:
        return None
    return lang


@functools.cache
def _parser(lang: str) -> Any:
    """A tree-sitter parser for `lang`, or None when its wheel is missing or does not load."""
    module, factory = GRAMMARS[lang].wheel
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
def _parse(lang: str, content: bytes) -> Node | None:
    """The root node of `content`. Cached: grouping asks about the same file hunk after hunk."""
    try:
        root: Node = _parser(lang).parse(content).root_node
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


def _ts(factory: str) -> Grammar:
    return Grammar(
        wheel=("tree_sitter_typescript", factory),
        separator=".",
        scope_kinds=_TS_SCOPES,
        identifiers=TS_IDENTS,
        binders=js_binders(TS_IDENTS),
        ignored=TS_RESERVED | TS_BUILTIN_TYPES,
        wrappers=frozenset({"export_statement"}),
        leading=frozenset({"decorator"}),
    )


GRAMMARS: dict[str, Grammar] = {
    "python": Grammar(
        wheel=("tree_sitter_python", "language"),
        separator=".",
        scope_kinds={"function_definition": "function", "class_definition": "class"},
        identifiers=PY_IDENTS,
        binders={},  # Python's names are resolved by scope: see _py_names
        ignored=PY_RESERVED,
        wrappers=frozenset({"decorated_definition"}),
    ),
    "c": Grammar(
        wheel=("tree_sitter_c", "language"),
        separator=".",
        scope_kinds=_C_SCOPES,
        identifiers=C_IDENTS,
        binders=C_BINDERS,
        ignored=C_RESERVED | C_BUILTIN_TYPES,
    ),
    "cpp": Grammar(
        wheel=("tree_sitter_cpp", "language"),
        separator="::",
        scope_kinds={**_C_SCOPES, "class_specifier": "class", "namespace_definition": "namespace"},
        identifiers=CPP_IDENTS,
        binders=CPP_BINDERS,
        ignored=CPP_RESERVED | C_BUILTIN_TYPES,
        wrappers=frozenset({"template_declaration"}),
    ),
    "javascript": Grammar(
        wheel=("tree_sitter_javascript", "language"),
        separator=".",
        scope_kinds=_JS_SCOPES,
        identifiers=JS_IDENTS,
        binders=js_binders(JS_IDENTS),
        ignored=JS_RESERVED,
        wrappers=frozenset({"export_statement"}),
        leading=frozenset({"decorator"}),
    ),
    "typescript": _ts("language_typescript"),
    "tsx": _ts("language_tsx"),
    "go": Grammar(
        wheel=("tree_sitter_go", "language"),
        separator=".",
        scope_kinds={
            "function_declaration": "function",
            "method_declaration": "method",
            "type_spec": "type",
        },
        identifiers=GO_IDENTS,
        binders=GO_BINDERS,
        ignored=GO_RESERVED | GO_BUILTIN_TYPES,
    ),
    "rust": Grammar(
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
        identifiers=RUST_IDENTS,
        binders=RUST_BINDERS,
        ignored=RUST_RESERVED | RUST_BUILTIN_TYPES,
        leading=frozenset({"attribute_item"}),
    ),
    "java": Grammar(
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
        identifiers=JAVA_IDENTS,
        binders=JAVA_BINDERS,
        ignored=JAVA_RESERVED,
    ),
}
