"""The token scan's rules for each language without a grammar (C, C++, JavaScript, TypeScript,
Go, Rust, Java; `_FALLBACKS`) and its entry point, `scan_names`. A language's scan support is
its rules here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ddchange.hierarchy.syntax.base import Names
from ddchange.hierarchy.syntax.binding import Role
from ddchange.hierarchy.syntax.fallback import (
    C_STRIP,
    GO_STRIP,
    JS_STRIP,
    RUST_STRIP,
    Fallback,
    Mark,
    Text,
    _in_block,
    _rule,
    body_follows,
    c_define,
    c_definition,
    c_gnu_definition,
    c_typedef,
    each,
    first_names,
    go_imports,
    go_names,
    import_marks,
    in_go_block,
    last_name,
    not_keyword,
    not_keyword_head,
    rust_name,
    scan_text,
)
from ddchange.hierarchy.syntax.words import (
    C_BUILTIN_TYPES,
    C_CONTEXTUAL,
    C_RESERVED,
    C_TYPE_WORDS,
    CPP_CONTEXTUAL,
    CPP_RESERVED,
    GO_BUILTIN_TYPES,
    GO_RESERVED,
    IDENT,
    JAVA_CONTEXTUAL,
    JAVA_RESERVED,
    JS_CONTEXTUAL,
    JS_RESERVED,
    NAME,
    NAMES,
    RUST_BUILTIN_TYPES,
    RUST_CONTEXTUAL,
    RUST_RESERVED,
    TS_BUILTIN_TYPES,
    TS_CONTEXTUAL,
    TS_RESERVED,
)


def scan_names(lang: str | None, content: bytes, rows: frozenset[int]) -> Names:
    family = _FALLBACKS.get(lang or "")
    if family is None:
        return Names(frozenset(), frozenset())  # no code we know: it names nothing
    text = scan_text(family.strip, content)
    defined: set[str] = set()
    used: set[str] = set()
    for row in sorted(r for r in rows if r < len(text.clean)):
        marks = [mark for rule in family.rules for mark in rule(family, text, row)]
        defined.update(m.text for m in marks if m.text is not None)
        roles = {(m.start, m.end): m.role for m in marks if m.text is None}
        for token in IDENT.finditer(text.clean[row]):
            role = roles.get(token.span())
            if role in (Role.DEFINE, Role.DEFINE_AND_USE):
                defined.add(token.group())
            if role in (None, Role.DEFINE_AND_USE):
                used.add(token.group())
    return Names(frozenset(defined - family.ignored), frozenset(used - family.ignored))


_C_RULES = (
    c_define,
    # `type name(...)`: a function when a body follows; a prototype outside function bodies.
    _rule(
        rf"^(?P<head>\s*{C_TYPE_WORDS})(?:{NAME}::)*(?P<def>~?{NAME})\s*\((?P<params>.*)",
        c_definition,
    ),
    # GNU style: `static char *` on one line, `name_of (...)` at column 0 on the next.
    _rule(rf"^(?:{NAME}::)*(?P<def>~?{NAME})\s*\((?P<params>.*)", c_gnu_definition),
    _rule(
        r"^\s*(?:typedef\s+)?(?:template\s*<.*>\s*)?"
        r"(?:struct|union|class|namespace|enum(?:\s+(?:class|struct))?)\s+"
        rf"(?:[A-Z_][A-Z0-9_]*\s+)?(?P<def>{NAME})\s*(?:final\b\s*)?(?::(?!:)[^;{{]*)?(?=\{{|$)",
        body_follows,
    ),
    _rule(r"\benum\b[^{;]*\{(?P<members>[^}]*)"),
    _rule(r"^\s*(?P<members>[^;{}()]+)", _in_block("enum")),
    c_typedef,
    _rule(rf"^\s*\}}\s*(?P<def>{NAME}(?:\s*,\s*\**\s*{NAME})*)\s*;"),  # `} name;`
    # `type name = ...;`: a global variable, a field, or (in a function body) a local.
    _rule(
        rf"^(?P<head>\s*{C_TYPE_WORDS})(?P<target>{NAME})\s*(?:\[[^\]]*\]\s*)*(?:=|;|,)",
        not_keyword_head,
    ),
    _rule(rf"^\s*using\s+(?P<def>{NAME})\s*="),
    _rule(rf"(?:<|,)\s*(?:typename|class)\s+(?P<bind>{NAME})"),  # template parameters
)


_JS_METHOD_WORDS = (
    r"(?:(?:static|async|get|set|public|private|protected|readonly|abstract|override)\s+)*"
)


_JS_RULES = (
    _rule(rf"\bfunction\b\s*\*?\s*(?P<def>{NAME})\s*(?:<[^>]*>)?\s*\((?P<params>.*)"),
    _rule(rf"\bclass\s+(?P<def>{NAME})"),
    _rule(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?"
        rf"(?:interface|enum|namespace)\s+(?P<def>{NAME})"
    ),
    _rule(rf"^\s*(?:export\s+)?(?:declare\s+)?type\s+(?P<def>{NAME})\s*(?:<[^>]*>)?\s*="),
    _rule(rf"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<target>{NAME}|\{{[^}}]*\}}|\[[^\]]*\])"),
    _rule(r"\benum\b[^{;]*\{(?P<members>[^}]*)"),
    _rule(r"^\s*(?P<members>[^;{}()]+)", _in_block("enum")),
    # A class field: `radius: number = 1;`, `handler = (e) => {...}`, `static s = 1;`.
    _rule(
        rf"^\s*(?:@{NAME}(?:\([^)]*\))?\s+)*{_JS_METHOD_WORDS}(?P<def>#?{NAME})\s*[?!]?\s*"
        r"(?::[^=;]*)?(?:=(?![=>])|;)",
        _in_block("class"),
    ),
    # The parameters of `const f = (a, b) => ...` and `const g = x => ...`.
    _rule(
        rf"^\s*(?:export\s+)?(?:const|let|var)\s+{NAME}\s*(?::[^=]*)?=\s*(?:async\s+)?"
        rf"(?:\((?P<params>[^)]*)\)|(?P<bind>{NAME}))\s*(?::[^=]*)?=>"
    ),
    _rule(
        rf"^\s+{_JS_METHOD_WORDS}\*?\s*(?P<def>#?{NAME})\s*(?:<[^>]*>)?\s*"
        r"\((?P<params>[^)]*)\)\s*(?::\s*[^{=;]+)?\{",
        not_keyword(TS_RESERVED),
    ),
)


def _js_imports(family: Fallback, text: Text, row: int) -> Iterator[Mark]:
    """`import a, {b as c, d} from "m"` / `import * as ns from "m"` (strings are blanked)."""
    clause = re.match(r"\s*import\s+(?:type\s+)?(.*?)\s*\bfrom\b", text.clean[row])
    if clause is None:
        return
    at, value = clause.start(1), clause.group(1)
    for pattern in (rf"^({NAME})\s*(?:,|$)", rf"\*\s*as\s+({NAME})"):
        bound = re.search(pattern, value)
        if bound is not None:
            yield Mark(start=at + bound.start(1), end=at + bound.end(1), role=Role.DEFINE)
    braces = re.search(r"\{([^}]*)", value)
    if braces is not None:
        yield from import_marks(braces.group(1), at + braces.start(1), first=False)


_GO_RULES = (
    _rule(rf"^func\s+(?P<def>{NAME})\s*(?:\[[^\]]*\])?\s*\((?P<params>.*)"),
    _rule(
        rf"^func\s*\(\s*(?:(?P<bind>{NAME})\s+)?\*?\s*[A-Za-z_][^)]*\)\s*(?P<def>{NAME})"
        r"\s*(?:\[[^\]]*\])?\s*\((?P<params>.*)"
    ),
    _rule(rf"^type\s+(?P<def>{NAME})"),
    _rule(rf"^package\s+(?P<bind>{NAME})"),
    _rule(rf"^(?:const|var)\s+(?P<def>{NAMES})"),
    # Inside `const (`, `var (`, `type (` blocks and struct/interface bodies.
    _rule(
        rf"^\s+(?P<def>{NAMES})(?=\s*=|\s+[\w*\[]|\s*\(|\s*$)",
        in_go_block("const", "var", "type"),
    ),
    _rule(rf"^\s*(?:for\s+)?(?P<bind>{NAMES})\s*:="),
    go_imports,
)


_RUST_RULES = (
    _rule(rf"\bfn\s+(?P<def>{NAME})\s*(?:<[^>]*>)?\s*\((?P<params>.*)"),
    _rule(rf"\b(?:struct|enum|trait|mod|union|type)\s+(?P<def>{NAME})"),
    _rule(rf"\b(?:const|static)\s+(?:mut\s+)?(?P<def>{NAME})\s*:"),
    _rule(rf"\bmacro_rules!\s*(?P<def>{NAME})"),
    _rule(rf"\blet\s+(?:mut\s+)?(?P<bind>{NAME})\b(?!\s*[{{(])"),  # not `let Point {{ x }}`
    _rule(rf"^\s*(?:pub(?:\([^)]*\))?\s+)?(?P<def>{NAME})\s*:(?!:)", _in_block("struct", "union")),
    _rule(rf"^\s*(?P<def>{NAME})\s*(?:[({{,=]|$)", _in_block("enum")),
    _rule(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(?P<imports>[^;]*)"),
)


_JAVA_MODIFIERS = (
    r"(?:(?:public|private|protected|static|final|abstract|synchronized|native|default"
    r"|strictfp|transient|volatile)\s+|@\w+(?:\([^)]*\))?\s+)"
)


_JAVA_RULES = (
    _rule(rf"\b(?:class|interface|enum|record)\s+(?P<def>{NAME})"),
    _rule(
        rf"^\s*{_JAVA_MODIFIERS}*(?:<[^>]*>\s*)?(?P<head>[\w.$]+(?:<[^()]*>)?(?:\[\])*\s+)"
        rf"(?P<def>{NAME})\s*\((?P<params>.*)",
        not_keyword_head,
    ),
    # `type name = ...;`: a field in a class body, a local variable in a method.
    _rule(
        rf"^\s*{_JAVA_MODIFIERS}*(?P<head>[\w.$]+(?:<[^()=]*>)?(?:\[\])*\s+)(?P<target>{NAME})"
        r"\s*(?:=|;|,)",
        not_keyword_head,
    ),
    _rule(r"^\s*(?P<members>[^;{}()]+)", _in_block("enum")),
    _rule(rf"^\s*import\s+(?:static\s+)?[\w.]*?(?P<defuse>{NAME})\s*;"),
    _rule(r"^\s*package\s+(?P<bind>[\w.]+)"),
)


_TS_FALLBACK = Fallback(
    strip=JS_STRIP,
    rules=(*_JS_RULES, _js_imports),
    ignored=TS_RESERVED | TS_BUILTIN_TYPES | TS_CONTEXTUAL,
    param=first_names,
)


_FALLBACKS: dict[str, Fallback] = {
    "c": Fallback(
        strip=C_STRIP,
        rules=_C_RULES,
        ignored=C_RESERVED | C_BUILTIN_TYPES | C_CONTEXTUAL,
        param=each(last_name),
    ),
    "cpp": Fallback(
        strip=C_STRIP,
        rules=_C_RULES,
        ignored=CPP_RESERVED | C_BUILTIN_TYPES | CPP_CONTEXTUAL,
        param=each(last_name),
    ),
    "javascript": Fallback(
        strip=JS_STRIP,
        rules=(*_JS_RULES, _js_imports),
        ignored=JS_RESERVED | JS_CONTEXTUAL,
        param=first_names,
    ),
    "typescript": _TS_FALLBACK,
    "tsx": _TS_FALLBACK,
    "go": Fallback(
        strip=GO_STRIP, rules=_GO_RULES, ignored=GO_RESERVED | GO_BUILTIN_TYPES, param=go_names
    ),
    "rust": Fallback(
        strip=RUST_STRIP,
        rules=_RUST_RULES,
        ignored=RUST_RESERVED | RUST_BUILTIN_TYPES | RUST_CONTEXTUAL,
        param=each(rust_name),
    ),
    "java": Fallback(
        strip=C_STRIP,
        rules=_JAVA_RULES,
        ignored=JAVA_RESERVED | JAVA_CONTEXTUAL,
        param=each(last_name),
    ),
}
