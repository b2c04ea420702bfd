"""The token scan's rules for each language without a grammar (C, C++, JavaScript, TypeScript,
Go, Rust, Java; `_FALLBACKS`) and its entry point, `_scan_names`. A language's scan support is
its rules here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ddchange.hierarchy.syntax.base import Names
from ddchange.hierarchy.syntax.binding import _Role
from ddchange.hierarchy.syntax.fallback import (
    _C_STRIP,
    _GO_STRIP,
    _JS_STRIP,
    _RUST_STRIP,
    _body_follows,
    _c_define,
    _c_definition,
    _c_gnu_definition,
    _c_typedef,
    _each,
    _Fallback,
    _first_names,
    _go_imports,
    _go_names,
    _import_marks,
    _in_block,
    _in_go_block,
    _last_name,
    _Mark,
    _not_keyword,
    _not_keyword_head,
    _rule,
    _rust_name,
    _scan_text,
    _Text,
)
from ddchange.hierarchy.syntax.words import (
    _C_BUILTIN_TYPES,
    _C_CONTEXTUAL,
    _C_RESERVED,
    _C_TYPE_WORDS,
    _CPP_CONTEXTUAL,
    _CPP_RESERVED,
    _GO_BUILTIN_TYPES,
    _GO_RESERVED,
    _IDENT,
    _JAVA_CONTEXTUAL,
    _JAVA_RESERVED,
    _JS_CONTEXTUAL,
    _JS_RESERVED,
    _NAME,
    _NAMES,
    _RUST_BUILTIN_TYPES,
    _RUST_CONTEXTUAL,
    _RUST_RESERVED,
    _TS_BUILTIN_TYPES,
    _TS_CONTEXTUAL,
    _TS_RESERVED,
)


def _scan_names(lang: str | None, content: bytes, rows: frozenset[int]) -> Names:
    family = _FALLBACKS.get(lang or "")
    if family is None:
        return Names(frozenset(), frozenset())  # no code we know: it names nothing
    text = _scan_text(family.strip, content)
    defined: set[str] = set()
    used: set[str] = set()
    for row in sorted(r for r in rows if r < len(text.clean)):
        marks = [mark for rule in family.rules for mark in rule(family, text, row)]
        defined.update(m.text for m in marks if m.text is not None)
        roles = {(m.start, m.end): m.role for m in marks if m.text is None}
        for token in _IDENT.finditer(text.clean[row]):
            role = roles.get(token.span())
            if role in (_Role.DEFINE, _Role.DEFINE_AND_USE):
                defined.add(token.group())
            if role in (None, _Role.DEFINE_AND_USE):
                used.add(token.group())
    return Names(frozenset(defined - family.ignored), frozenset(used - family.ignored))


_C_RULES = (
    _c_define,
    # `type name(...)`: a function when a body follows; a prototype outside function bodies.
    _rule(
        rf"^(?P<head>\s*{_C_TYPE_WORDS})(?:{_NAME}::)*(?P<def>~?{_NAME})\s*\((?P<params>.*)",
        _c_definition,
    ),
    # GNU style: `static char *` on one line, `name_of (...)` at column 0 on the next.
    _rule(rf"^(?:{_NAME}::)*(?P<def>~?{_NAME})\s*\((?P<params>.*)", _c_gnu_definition),
    _rule(
        r"^\s*(?:typedef\s+)?(?:template\s*<.*>\s*)?"
        r"(?:struct|union|class|namespace|enum(?:\s+(?:class|struct))?)\s+"
        rf"(?:[A-Z_][A-Z0-9_]*\s+)?(?P<def>{_NAME})\s*(?:final\b\s*)?(?::(?!:)[^;{{]*)?(?=\{{|$)",
        _body_follows,
    ),
    _rule(r"\benum\b[^{;]*\{(?P<members>[^}]*)"),
    _rule(r"^\s*(?P<members>[^;{}()]+)", _in_block("enum")),
    _c_typedef,
    _rule(rf"^\s*\}}\s*(?P<def>{_NAME}(?:\s*,\s*\**\s*{_NAME})*)\s*;"),  # `} name;`
    # `type name = ...;`: a global variable, a field, or (in a function body) a local.
    _rule(
        rf"^(?P<head>\s*{_C_TYPE_WORDS})(?P<target>{_NAME})\s*(?:\[[^\]]*\]\s*)*(?:=|;|,)",
        _not_keyword_head,
    ),
    _rule(rf"^\s*using\s+(?P<def>{_NAME})\s*="),
    _rule(rf"(?:<|,)\s*(?:typename|class)\s+(?P<bind>{_NAME})"),  # template parameters
)


_JS_METHOD_WORDS = (
    r"(?:(?:static|async|get|set|public|private|protected|readonly|abstract|override)\s+)*"
)


_JS_RULES = (
    _rule(rf"\bfunction\b\s*\*?\s*(?P<def>{_NAME})\s*(?:<[^>]*>)?\s*\((?P<params>.*)"),
    _rule(rf"\bclass\s+(?P<def>{_NAME})"),
    _rule(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?"
        rf"(?:interface|enum|namespace)\s+(?P<def>{_NAME})"
    ),
    _rule(rf"^\s*(?:export\s+)?(?:declare\s+)?type\s+(?P<def>{_NAME})\s*(?:<[^>]*>)?\s*="),
    _rule(rf"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<target>{_NAME}|\{{[^}}]*\}}|\[[^\]]*\])"),
    _rule(r"\benum\b[^{;]*\{(?P<members>[^}]*)"),
    _rule(r"^\s*(?P<members>[^;{}()]+)", _in_block("enum")),
    # A class field: `radius: number = 1;`, `handler = (e) => {...}`, `static s = 1;`.
    _rule(
        rf"^\s*(?:@{_NAME}(?:\([^)]*\))?\s+)*{_JS_METHOD_WORDS}(?P<def>#?{_NAME})\s*[?!]?\s*"
        r"(?::[^=;]*)?(?:=(?![=>])|;)",
        _in_block("class"),
    ),
    # The parameters of `const f = (a, b) => ...` and `const g = x => ...`.
    _rule(
        rf"^\s*(?:export\s+)?(?:const|let|var)\s+{_NAME}\s*(?::[^=]*)?=\s*(?:async\s+)?"
        rf"(?:\((?P<params>[^)]*)\)|(?P<bind>{_NAME}))\s*(?::[^=]*)?=>"
    ),
    _rule(
        rf"^\s+{_JS_METHOD_WORDS}\*?\s*(?P<def>#?{_NAME})\s*(?:<[^>]*>)?\s*"
        r"\((?P<params>[^)]*)\)\s*(?::\s*[^{=;]+)?\{",
        _not_keyword(_TS_RESERVED),
    ),
)


def _js_imports(family: _Fallback, text: _Text, row: int) -> Iterator[_Mark]:
    """`import a, {b as c, d} from "m"` / `import * as ns from "m"` (strings are blanked)."""
    clause = re.match(r"\s*import\s+(?:type\s+)?(.*?)\s*\bfrom\b", text.clean[row])
    if clause is None:
        return
    at, value = clause.start(1), clause.group(1)
    for pattern in (rf"^({_NAME})\s*(?:,|$)", rf"\*\s*as\s+({_NAME})"):
        bound = re.search(pattern, value)
        if bound is not None:
            yield _Mark(start=at + bound.start(1), end=at + bound.end(1), role=_Role.DEFINE)
    braces = re.search(r"\{([^}]*)", value)
    if braces is not None:
        yield from _import_marks(braces.group(1), at + braces.start(1), first=False)


_GO_RULES = (
    _rule(rf"^func\s+(?P<def>{_NAME})\s*(?:\[[^\]]*\])?\s*\((?P<params>.*)"),
    _rule(
        rf"^func\s*\(\s*(?:(?P<bind>{_NAME})\s+)?\*?\s*[A-Za-z_][^)]*\)\s*(?P<def>{_NAME})"
        r"\s*(?:\[[^\]]*\])?\s*\((?P<params>.*)"
    ),
    _rule(rf"^type\s+(?P<def>{_NAME})"),
    _rule(rf"^package\s+(?P<bind>{_NAME})"),
    _rule(rf"^(?:const|var)\s+(?P<def>{_NAMES})"),
    # Inside `const (`, `var (`, `type (` blocks and struct/interface bodies.
    _rule(
        rf"^\s+(?P<def>{_NAMES})(?=\s*=|\s+[\w*\[]|\s*\(|\s*$)",
        _in_go_block("const", "var", "type"),
    ),
    _rule(rf"^\s*(?:for\s+)?(?P<bind>{_NAMES})\s*:="),
    _go_imports,
)


_RUST_RULES = (
    _rule(rf"\bfn\s+(?P<def>{_NAME})\s*(?:<[^>]*>)?\s*\((?P<params>.*)"),
    _rule(rf"\b(?:struct|enum|trait|mod|union|type)\s+(?P<def>{_NAME})"),
    _rule(rf"\b(?:const|static)\s+(?:mut\s+)?(?P<def>{_NAME})\s*:"),
    _rule(rf"\bmacro_rules!\s*(?P<def>{_NAME})"),
    _rule(rf"\blet\s+(?:mut\s+)?(?P<bind>{_NAME})\b(?!\s*[{{(])"),  # not `let Point {{ x }}`
    _rule(rf"^\s*(?:pub(?:\([^)]*\))?\s+)?(?P<def>{_NAME})\s*:(?!:)", _in_block("struct", "union")),
    _rule(rf"^\s*(?P<def>{_NAME})\s*(?:[({{,=]|$)", _in_block("enum")),
    _rule(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(?P<imports>[^;]*)"),
)


_JAVA_MODIFIERS = (
    r"(?:(?:public|private|protected|static|final|abstract|synchronized|native|default"
    r"|strictfp|transient|volatile)\s+|@\w+(?:\([^)]*\))?\s+)"
)


_JAVA_RULES = (
    _rule(rf"\b(?:class|interface|enum|record)\s+(?P<def>{_NAME})"),
    _rule(
        rf"^\s*{_JAVA_MODIFIERS}*(?:<[^>]*>\s*)?(?P<head>[\w.$]+(?:<[^()]*>)?(?:\[\])*\s+)"
        rf"(?P<def>{_NAME})\s*\((?P<params>.*)",
        _not_keyword_head,
    ),
    # `type name = ...;`: a field in a class body, a local variable in a method.
    _rule(
        rf"^\s*{_JAVA_MODIFIERS}*(?P<head>[\w.$]+(?:<[^()=]*>)?(?:\[\])*\s+)(?P<target>{_NAME})"
        r"\s*(?:=|;|,)",
        _not_keyword_head,
    ),
    _rule(r"^\s*(?P<members>[^;{}()]+)", _in_block("enum")),
    _rule(rf"^\s*import\s+(?:static\s+)?[\w.]*?(?P<defuse>{_NAME})\s*;"),
    _rule(r"^\s*package\s+(?P<bind>[\w.]+)"),
)


_TS_FALLBACK = _Fallback(
    strip=_JS_STRIP,
    rules=(*_JS_RULES, _js_imports),
    ignored=_TS_RESERVED | _TS_BUILTIN_TYPES | _TS_CONTEXTUAL,
    param=_first_names,
)


_FALLBACKS: dict[str, _Fallback] = {
    "c": _Fallback(
        strip=_C_STRIP,
        rules=_C_RULES,
        ignored=_C_RESERVED | _C_BUILTIN_TYPES | _C_CONTEXTUAL,
        param=_each(_last_name),
    ),
    "cpp": _Fallback(
        strip=_C_STRIP,
        rules=_C_RULES,
        ignored=_CPP_RESERVED | _C_BUILTIN_TYPES | _CPP_CONTEXTUAL,
        param=_each(_last_name),
    ),
    "javascript": _Fallback(
        strip=_JS_STRIP,
        rules=(*_JS_RULES, _js_imports),
        ignored=_JS_RESERVED | _JS_CONTEXTUAL,
        param=_first_names,
    ),
    "typescript": _TS_FALLBACK,
    "tsx": _TS_FALLBACK,
    "go": _Fallback(
        strip=_GO_STRIP, rules=_GO_RULES, ignored=_GO_RESERVED | _GO_BUILTIN_TYPES, param=_go_names
    ),
    "rust": _Fallback(
        strip=_RUST_STRIP,
        rules=_RUST_RULES,
        ignored=_RUST_RESERVED | _RUST_BUILTIN_TYPES | _RUST_CONTEXTUAL,
        param=_each(_rust_name),
    ),
    "java": _Fallback(
        strip=_C_STRIP,
        rules=_JAVA_RULES,
        ignored=_JAVA_RESERVED | _JAVA_CONTEXTUAL,
        param=_each(_last_name),
    ),
}
