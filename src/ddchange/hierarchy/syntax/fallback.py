"""The token scan used where no grammar is: a file's text with strings and comments blanked
(`scan_text`), and the machinery of per-language rules (`Fallback`, `_rule`, marks of
definitions, bindings and uses). Only regular expressions: it never raises on broken code.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ddchange.hierarchy.syntax.binding import Role
from ddchange.hierarchy.syntax.words import C_STATEMENT_WORDS, IDENT, NAME, TS_MODIFIERS


@dataclass(frozen=True)
class Text:
    raw: list[str]  # the file's lines
    clean: list[str]  # the same with comments and strings blanked out, columns preserved

    @functools.cached_property
    def owners(self) -> list[str | None]:
        """For each row, the header of the innermost `{` block open where it starts (the code
        before that `{`, or the line before for a `{` alone); None at top level. One pass over
        the file, so that context costs nothing per asked line.
        """
        owners: list[str | None] = []
        stack: list[str] = []
        previous = ""
        for line in self.clean:
            owners.append(stack[-1] if stack else None)
            for brace in re.finditer(r"[{}]", line):
                if brace.group() == "{":
                    stack.append(line[: brace.start()].strip() or previous)
                elif stack:
                    stack.pop()
            previous = line.strip() or previous
        return owners


@functools.lru_cache(maxsize=16)
def scan_text(strip: re.Pattern[str], content: bytes) -> Text:
    """The lines of `content`, raw and blanked. Cached: grouping asks hunk after hunk."""
    raw = content.decode("utf-8", "replace")
    return Text(raw.split("\n"), _blank(strip, raw).split("\n"))


# A block whose header has one of these keywords (before any parenthesis, which would make it a
# function taking, say, a `struct point`) holds declarations: fields, methods, members.
_DECLARATION_BLOCK = re.compile(
    r"^[^(]*\b(struct|union|class|enum|namespace|interface|record|extern|trait|impl|mod)\b"
)


def _block_kind(header: str | None) -> str | None:
    if header is None or header.count(")") > header.count("("):
        return None  # `struct point *p)`: the end of a parameter list, so a function's body
    found = _DECLARATION_BLOCK.search(header)
    return None if found is None else found.group(1)


def _braces_local(text: Text, row: int) -> bool:
    """Whether `row` is inside a function body (a block that holds no declarations)."""
    owner = text.owners[row]
    return owner is not None and _block_kind(owner) is None


def _in_block(*kinds: str) -> _When:
    """The row lies directly in a struct/class/enum/... body."""
    return lambda text, row, match: _block_kind(text.owners[row]) in kinds


@dataclass(frozen=True, kw_only=True)
class Mark:
    start: int
    end: int
    role: Role
    text: str | None = None  # a defined name that is no identifier on the line (Go imports)


_When = Callable[[Text, int, "re.Match[str]"], bool]


_Rule = Callable[["Fallback", Text, int], Iterator[Mark]]


@dataclass(frozen=True, kw_only=True)
class Fallback:
    """How the scan reads one language family."""

    strip: re.Pattern[str]  # comments and literals, blanked before scanning
    rules: tuple[_Rule, ...]
    ignored: frozenset[str]  # keywords (contextual ones too) and builtin types
    param: Callable[[Sequence[str]], list[list[re.Match[str]]]] = lambda chunks: []
    is_local: Callable[[Text, int], bool] = _braces_local  # is a `target` on this row local?


def _blank(pattern: re.Pattern[str], text: str) -> str:
    """`text` with every match of `pattern` replaced by spaces, keeping lines and columns."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def _rule(pattern: str, when: _When | None = None) -> _Rule:
    compiled = re.compile(pattern)

    def rule(family: Fallback, text: Text, row: int) -> Iterator[Mark]:
        for match in compiled.finditer(text.clean[row]):
            if when is None or when(text, row, match):
                yield from _group_marks(family, text, row, match)

    return rule


def _group_marks(family: Fallback, text: Text, row: int, match: re.Match[str]) -> Iterator[Mark]:
    for group, value in match.groupdict().items():
        if value is None:
            continue
        offset = match.start(group)
        if group in _ROLE_GROUPS:
            yield from _ident_marks(value, offset, _ROLE_GROUPS[group])
        elif group == "target":
            role = Role.BIND if family.is_local(text, row) else Role.DEFINE
            for token in _PATTERN_NAME.finditer(value):
                yield Mark(start=offset + token.start(), end=offset + token.end(), role=role)
        elif group == "params":
            yield from _param_marks(family, value, offset)
        elif group in ("imports", "first_imports"):
            yield from import_marks(value, offset, first=group == "first_imports")
        elif group == "members":
            for chunk, at in _chunks(value, offset):
                yield from _first_ident_mark(chunk, at, Role.DEFINE)


_ROLE_GROUPS = {"def": Role.DEFINE, "defuse": Role.DEFINE_AND_USE, "bind": Role.BIND}


# The names a destructuring pattern binds: in `{a, b: c}` that is a and c, not the key b.
_PATTERN_NAME = re.compile(r"(?<![\w$])[A-Za-z_$][\w$]*(?![\w$]|\s*:(?!:))")


def _ident_marks(value: str, offset: int, role: Role) -> Iterator[Mark]:
    for token in IDENT.finditer(value):
        yield Mark(start=offset + token.start(), end=offset + token.end(), role=role)


def _first_ident_mark(chunk: str, offset: int, role: Role) -> Iterator[Mark]:
    token = IDENT.search(chunk)
    if token is not None:
        yield Mark(start=offset + token.start(), end=offset + token.end(), role=role)


def _chunks(value: str, offset: int) -> Iterator[tuple[str, int]]:
    """Comma-separated parts of a list (with their columns), up to its closing bracket."""
    depth, start = 0, 0
    for index, char in enumerate(value + ","):
        if char in "([{<":
            depth += 1
        elif char in ")]}>" and depth > 0:
            depth -= 1
        elif char in ")]}" or (char == "," and depth == 0):
            yield value[start:index], offset + start
            start = index + 1
            if char != ",":
                return


def _param_marks(family: Fallback, value: str, offset: int) -> Iterator[Mark]:
    chunks = list(_chunks(value, offset))
    for (_, at), found in zip(chunks, family.param([c for c, _ in chunks]), strict=True):
        for name in found:
            yield Mark(start=at + name.start(), end=at + name.end(), role=Role.BIND)


def import_marks(value: str, offset: int, first: bool) -> Iterator[Mark]:
    for chunk, at in _chunks(value.replace("{", " ").replace("(", " "), offset):
        alias = re.search(r"\bas\s+([A-Za-z_]\w*)", chunk)
        tokens = list(IDENT.finditer(chunk))
        if alias is not None:
            yield Mark(start=at + alias.start(1), end=at + alias.end(1), role=Role.DEFINE)
        elif tokens and not chunk.rstrip().endswith("*"):
            token = tokens[0] if first else tokens[-1]
            yield Mark(start=at + token.start(), end=at + token.end(), role=Role.DEFINE_AND_USE)


# Parameter names, per parameter (none: a parameter without a name) ---------------------------

_ParamNames = Callable[[Sequence[str]], list[list[re.Match[str]]]]


def each(pick: Callable[[str], re.Match[str] | None]) -> _ParamNames:
    return lambda chunks: [[found] if (found := pick(chunk)) else [] for chunk in chunks]


def first_names(chunks: Sequence[str]) -> list[list[re.Match[str]]]:
    """JS and TS: the name comes first (`x: int = 3`, `...rest`, `private r: number`); a
    destructuring parameter `{a, b: c}` binds a and c."""
    found: list[list[re.Match[str]]] = []
    for chunk in chunks:
        pattern = re.match(r"\s*(?:\.\.\.)?[{\[][^}\]]*", chunk)
        if pattern is not None:
            found.append(list(_PATTERN_NAME.finditer(chunk, 0, pattern.end())))
            continue
        head = re.sub(r"\s*=.*", "", chunk)
        names = (t for t in IDENT.finditer(head) if t.group() not in TS_MODIFIERS)
        found.append(list(itertools.islice(names, 1)))
    return found


def last_name(chunk: str) -> re.Match[str] | None:
    """C-like and Java: the name comes last (`const char *name`), absent in `f(int)`."""
    tokens = list(IDENT.finditer(re.sub(r"\s*=.*|\[.*", "", chunk)))
    return tokens[-1] if len(tokens) >= 2 else None


def rust_name(chunk: str) -> re.Match[str] | None:
    """`mut x: T` -> x (the name is what stands before a single colon)."""
    return re.search(r"(?<![A-Za-z0-9_])[A-Za-z_]\w*(?=\s*:(?!:))", chunk)


def go_names(chunks: Sequence[str]) -> list[list[re.Match[str]]]:
    """`(a, b int)` names a and b but `(int, string)` names nothing: parameters are all named or
    all unnamed, so one parameter with two words settles it for the whole list."""
    named = any(len(IDENT.findall(chunk)) >= 2 for chunk in chunks)
    return [list(itertools.islice(IDENT.finditer(chunk), 1 if named else 0)) for chunk in chunks]


# Context conditions ----------------------------------------------------------------------------


def _before(text: Text, row: int) -> Iterator[str]:
    """The clean lines before `row`, nearest first (lazily: callers stop early)."""
    return (text.clean[r] for r in range(row - 1, -1, -1))


def _after(text: Text, row: int) -> Iterator[str]:
    return (text.clean[r] for r in range(row + 1, len(text.clean)))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _opens_body(text: Text, row: int, match: re.Match[str]) -> bool:
    """The statement from the match on goes on to `{` (a definition) before any `;`."""
    return _statement_end(text, row, match.start("params")) == "{"


def c_definition(text: Text, row: int, match: re.Match[str]) -> bool:
    """`type name(...)` defines a function when its body follows; outside function bodies a
    prototype, a method declaration or a global object (`Widget w(3);`) counts too. No
    statement keyword may head it."""
    if not not_keyword_head(text, row, match) or match.group("def") in C_STATEMENT_WORDS:
        return False
    end = _statement_end(text, row, match.start("params"))
    return end == "{" or (end == ";" and not _braces_local(text, row))


def c_gnu_definition(text: Text, row: int, match: re.Match[str]) -> bool:
    """GNU style: the name at column 0, its return type alone on the line before."""
    before = next((line for line in _before(text, row) if line.strip()), "")
    typeish = re.fullmatch(r"[A-Za-z_][\w\s*&:<>,]*", before.rstrip()) is not None
    qualified = "::" in match.group()  # `Widget::Widget(...)`: a constructor needs no type
    words = IDENT.findall(before)
    return ((typeish and not set(words) & C_STATEMENT_WORDS) or qualified) and _opens_body(
        text, row, match
    )


def _statement_end(text: Text, row: int, column: int) -> str:
    """The first `{` or `;` from (row, column) on, looking at most 30 lines ahead."""
    for line in [text.clean[row][column:], *text.clean[row + 1 : row + 30]]:
        found = re.search(r"[{;]", line)
        if found is not None:
            return found.group()
    return ""


def body_follows(text: Text, row: int, match: re.Match[str]) -> bool:
    """`struct X {` on one line, or `{` opening the next non-blank line (Allman style)."""
    if "{" in text.clean[row][match.end() :] or "{" in match.group():
        return True
    following = next((line for line in _after(text, row) if line.strip()), "")
    return following.lstrip().startswith("{")


def not_keyword_head(text: Text, row: int, match: re.Match[str]) -> bool:
    """No statement keyword heads the match (`return f(x);`), and it is no bare `struct X;`."""
    words = IDENT.findall(match.group("head") or "")
    return not set(words) & C_STATEMENT_WORDS and words not in (["struct"], ["class"], ["union"])


def not_keyword(words: frozenset[str]) -> _When:
    """The defined name is no keyword: `if (x) {` looks like a method to a regex."""
    return lambda text, row, match: match.group("def") not in words


def _go_block(text: Text, row: int) -> str:
    """The keyword of the top-level block `row` is in ("const", "var", "type", "import", "func")."""
    for line in _before(text, row):
        if line[:1].isalpha():
            return line.split()[0]
    return ""


def in_go_block(*keywords: str) -> _When:
    return lambda text, row, match: (
        text.clean[row][:1].isspace() and _go_block(text, row) in keywords
    )


def go_imports(family: Fallback, text: Text, row: int) -> Iterator[Mark]:
    """Import specs: the alias, or else the package's last path element. Strings are blanked in
    the clean text, so this reads the raw line."""
    line = text.raw[row]
    spec = re.fullmatch(r'\s*(?:import\s+)?(?:([A-Za-z_]\w*)\s+)?"([^"]+)"\s*(?://.*)?', line)
    in_block = line[:1].isspace() and _go_block(text, row) == "import"
    if spec is None or not (in_block or line.startswith("import")):
        return
    if spec.group(1) is not None:
        yield Mark(start=spec.start(1), end=spec.end(1), role=Role.DEFINE)
        return
    parts = spec.group(2).split("/")
    if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
        parts.pop()
    yield Mark(start=0, end=0, role=Role.DEFINE, text=parts[-1])


def c_typedef(family: Fallback, text: Text, row: int) -> Iterator[Mark]:
    """`typedef ... name;` defines name; `typedef int (*cb)(int);` defines cb."""
    typedef = re.match(r"\s*typedef\b(.*);", text.clean[row])
    if typedef is None:
        return
    # Blank nested braces and array sizes (keeping columns): `struct { int a; } pt` -> pt.
    body = typedef.group(1)
    while (inner := re.sub(r"\{[^{}]*\}|\[[^\[\]]*\]", _spaces, body)) != body:
        body = inner
    pointer = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)", body)
    names = list(IDENT.finditer(body))
    name = pointer.span(1) if pointer is not None else names[-1].span() if names else None
    if name is not None:
        yield Mark(
            start=typedef.start(1) + name[0], end=typedef.start(1) + name[1], role=Role.DEFINE
        )


def _spaces(match: re.Match[str]) -> str:
    return " " * len(match.group())


def c_define(family: Fallback, text: Text, row: int) -> Iterator[Mark]:
    """`#define SQ(a) ((a) * (a))` defines SQ; its parameter a is bound wherever it appears."""
    line = text.clean[row]
    define = re.match(rf"\s*#\s*define\s+({NAME})(?:\(([^)]*)\))?", line)
    if define is None:
        return
    yield Mark(start=define.start(1), end=define.end(1), role=Role.DEFINE)
    params = set(IDENT.findall(define.group(2) or ""))
    for token in IDENT.finditer(line, define.end(1)):
        if token.group() in params:
            yield Mark(start=token.start(), end=token.end(), role=Role.BIND)


# Strip patterns: comments and string/char literals --------------------------------------------

C_STRIP = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])'"
    r"|^[ \t]*#[ \t]*(?:include|pragma|import)[^\n]*",  # `#include <x.h>` names no identifiers
    re.DOTALL | re.MULTILINE,
)


JS_STRIP = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`", re.DOTALL
)


GO_STRIP = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])+'|`[^`]*`", re.DOTALL
)


# Rust: a char literal is one character in quotes, which keeps lifetimes ('a) out of it.
RUST_STRIP = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\\n])'", re.DOTALL)


PY_STRIP = re.compile(
    r"#[^\n]*"
    r"|(?<![A-Za-z0-9_])[rRbBuUfF]{0,2}(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''"
    r"|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')",
    re.DOTALL,
)
