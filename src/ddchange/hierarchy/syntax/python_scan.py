"""Python's scopes and occurrences read from the text, statement by statement, where no grammar
is (`_py_scan_found`), and the entry point for Python names in both modes (`py_names`).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ddchange.hierarchy.syntax.base import Names
from ddchange.hierarchy.syntax.fallback import PY_STRIP, _chunks, _indent, scan_text
from ddchange.hierarchy.syntax.grammars import _parse, usable_language
from ddchange.hierarchy.syntax.python import PyFound, PyKind, PyOcc, PyScope, py_resolve
from ddchange.hierarchy.syntax.python_tree import py_qualified, py_tree_found
from ddchange.hierarchy.syntax.words import IDENT, NAME, PY_RESERVED


def py_names(path: str, content: bytes, rows: frozenset[int]) -> Names:
    by_row = _py_facts(content, usable_language(path) is not None)
    found = [by_row[row] for row in rows if row in by_row]
    return Names(
        frozenset().union(*(n.defined for n in found)), frozenset().union(*(n.used for n in found))
    )


@functools.lru_cache(maxsize=16)
def _py_facts(content: bytes, tree: bool) -> dict[int, Names]:
    """Each row's resolved names. Cached: grouping asks about the same file hunk after hunk, and
    every answer needs the whole file (an assignment further down makes a name local)."""
    root = _parse("python", content) if tree else None
    found = py_tree_found(root) if root is not None else _py_scan_found(content)
    defined: dict[int, set[str]] = {}
    used: dict[int, set[str]] = {}
    for occurrence in found.occurrences:
        names, uses = py_resolve(occurrence)
        defined.setdefault(occurrence.row, set()).update(names)
        used.setdefault(occurrence.row, set()).update(uses)
    return {
        row: Names(frozenset(defined[row]), frozenset(used[row]))
        for row in defined.keys() | used.keys()
    }


# Occurrences from the scan ----------------------------------------------------------------------
# Without a tree, statements come from the blanked text (a statement runs on while brackets are
# open or a line ends with a backslash) and blocks from indentation: a def or class header opens
# a scope that holds every later statement indented deeper than the header.


@dataclass(frozen=True, kw_only=True)
class _PyStatement:
    row: int  # its first row
    indent: int
    text: str  # its blanked lines joined with "\n", columns kept
    starts: tuple[int, ...]  # where each of its rows starts in `text`

    def row_at(self, offset: int) -> int:
        return self.row + bisect.bisect_right(self.starts, offset) - 1

    @functools.cached_property
    def depths(self) -> list[int]:
        """The bracket depth before each character (and at the end)."""
        depths, depth = [0], 0
        for char in self.text:
            depth = max(0, depth + (char in "([{") - (char in ")]}"))
            depths.append(depth)
        return depths

    @functools.cached_property
    def locals(self) -> frozenset[str]:
        """Lambda parameters and comprehension targets: local to a part of the statement, so
        the scan, which cannot tell which part, takes them to be local to all of it."""
        found: set[str] = set()
        for match in re.finditer(r"\blambda\b([^:]*):", self.text):
            for chunk, _ in _chunks(match.group(1), 0):
                found.update(IDENT.findall(chunk.split("=")[0])[:1])
        for match in re.finditer(r"\bfor\b(.*?)\bin\b", self.text, re.DOTALL):
            if self.depths[match.start()] > 0:
                found.update(IDENT.findall(match.group(1)))
        return frozenset(found)


def _py_statements(clean: list[str]) -> Iterator[_PyStatement]:
    rows: list[int] = []
    depth = 0
    for row, line in enumerate(clean):
        if not rows and not line.strip():
            continue
        header = re.match(r"\s*(?:async\s+)?(?:def|class)\s", line)
        if rows and depth > 0 and header and _indent(line) <= _indent(clean[rows[0]]):
            # An unclosed bracket (broken code) ends at the next definition, not at the end.
            yield _py_statement(clean, rows)
            rows, depth = [], 0
        rows.append(row)
        for char in line:
            depth = max(0, depth + (char in "([{") - (char in ")]}"))
        if depth == 0 and not line.rstrip().endswith("\\"):
            yield _py_statement(clean, rows)
            rows = []
    if rows:
        yield _py_statement(clean, rows)


def _py_statement(clean: list[str], rows: list[int]) -> _PyStatement:
    lines = [clean[row] for row in rows]
    starts = tuple(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    return _PyStatement(row=rows[0], indent=_indent(lines[0]), text="\n".join(lines), starts=starts)


def _py_scan_found(content: bytes) -> PyFound:
    found = PyFound(PyScope(kind=PyKind.MODULE, parent=None))
    blocks: list[tuple[int, PyScope]] = []  # (header indent, scope) of the open def/class blocks
    static = False  # the def ahead is decorated with @staticmethod
    for statement in _py_statements(scan_text(PY_STRIP, content).clean):
        while blocks and statement.indent <= blocks[-1][0]:
            blocks.pop()
        scope = blocks[-1][1] if blocks else found.module
        inner = _PyScan(found, statement).statement(scope, 0, static)
        static = re.match(r"\s*@\s*staticmethod\b", statement.text) is not None or (
            static and statement.text.lstrip().startswith("@")
        )
        if inner is not None:
            blocks.append((statement.indent, inner))
    return found


_PY_COMPOUND = re.compile(r"\s*(?:async\s+)?(if|elif|else|while|try|finally|for|with|except)\b")


_PY_SOFT_HEADER = re.compile(r"\s*(match|case)\b(?!\s*[=.,:)\]])")


_PY_AS = re.compile(rf"\bas\s+(\([^)]*\)|\[[^\]]*\]|{NAME}(?:\s*\.\s*{NAME})*)")


_PY_AFTER_NAME = re.compile(r"\s*(:=|==|=)")


_PY_WORD = re.compile(
    r"(?<![\w.])(?:(?P<obj>[A-Za-z_]\w*)\s*\.\s*(?P<attr>[A-Za-z_]\w*)|(?P<name>[A-Za-z_]\w*))"
    r"|\.\s*[A-Za-z_]\w*"  # an attribute of no plain name: f().x, the c of a.b.c
)


@dataclass(frozen=True)
class _PyScan:
    """Reads one statement's occurrences into `found`."""

    found: PyFound
    stm: _PyStatement

    def add(self, kind: PyOcc, at: int, scope: PyScope, name: str, member: str = "") -> None:
        self.found.add(kind, self.stm.row_at(at), scope, name, member)

    def statement(self, scope: PyScope, at: int, static: bool = False) -> PyScope | None:
        """The statement (or an inline body) from `at` on; the scope it opens, if any."""
        text = self.stm.text
        definition = re.compile(rf"\s*(?:async\s+)?(def|class)\s+({NAME})").match(text, at)
        if definition is not None:
            self.add(PyOcc.BIND, definition.start(2), scope, definition.group(2))
            if definition.group(1) == "def":
                return self.function(scope, definition, static)
            return self.cls(scope, definition)
        if re.compile(r"\s*(import|from)\s").match(text, at):
            self.imports(scope, at)
        elif (declared := re.compile(r"\s*(global|nonlocal)\s").match(text, at)) is not None:
            self.declaration(scope, declared)
        elif (deletion := re.compile(r"\s*del\s").match(text, at)) is not None:
            self.delete(scope, deletion.end())
        elif (compound := _PY_COMPOUND.match(text, at)) is not None:
            self.compound(scope, compound)
        elif (soft := _PY_SOFT_HEADER.match(text, at)) and text.rstrip().endswith(":"):
            colon = self.colon(soft.end()) or len(text)
            if soft.group(1) == "case":
                self.pattern(scope, soft.end(), colon)
            else:
                self.load(scope, soft.end(), colon)
        elif alias := re.compile(rf"\s*type\s+({NAME})\s*(?:\[[^\]]*\])?\s*=").match(text, at):
            self.add(PyOcc.BIND, alias.start(1), scope, alias.group(1))
            self.load(scope, alias.end(), len(text))
        else:
            self.simple(scope, at)
        return None

    def colon(self, at: int) -> int | None:
        """Where the header from `at` on ends: its first `:` outside brackets (not `:=`)."""
        for match in re.finditer(r":(?!=)", self.stm.text[at:]):
            if self.stm.depths[at + match.start()] == 0:
                return at + match.start()
        return None

    def inline(self, scope: PyScope, colon: int | None) -> None:
        """`if x: y = 1`: the body after the header's colon."""
        if colon is not None and self.stm.text[colon + 1 :].strip():
            self.statement(scope, colon + 1)

    def function(self, scope: PyScope, header: re.Match[str], static: bool) -> PyScope:
        method = scope.kind is PyKind.CLASS
        inner = PyScope(kind=PyKind.FUNCTION, parent=scope, owner=scope if method else None)
        text = self.stm.text
        opening = text.find("(", header.end())
        if opening < 0:
            return inner
        names = self.parameters(scope, inner, opening + 1)
        if method and not static and names:
            inner.self_name = names[0]
        closing = self._closing(opening)
        colon = self.colon(closing)
        self.load(scope, closing, len(text) if colon is None else colon)  # the return annotation
        self.inline(inner, colon)
        return inner

    def _closing(self, opening: int) -> int:
        depths = self.stm.depths
        for index in range(opening + 1, len(self.stm.text)):
            if depths[index + 1] == depths[opening]:
                return index + 1
        return len(self.stm.text)

    def parameters(self, outer: PyScope, inner: PyScope, at: int) -> list[str]:
        """Binds a parameter list's names in `inner`; defaults and annotations are read in
        `outer`. The names, in order (none for a leading `*args`)."""
        names: list[str] = []
        for chunk, start in _chunks(self.stm.text[at:], at):
            name = re.match(rf"\s*(\*{{0,2}})\s*({NAME})", chunk)
            if name is None:
                continue
            inner.bound.add(name.group(2))
            names.append("" if name.group(1) else name.group(2))
            # The annotation and the default apart: `x: Type = DEFAULT` is no keyword argument.
            default = re.compile(r"=(?!=)").search(chunk, name.end())
            middle = len(chunk) if default is None else default.start()
            self.load(outer, start + name.end(), start + middle)
            self.load(outer, start + middle, start + len(chunk))
        return [n for n in names[:1] if n]

    def cls(self, scope: PyScope, header: re.Match[str]) -> PyScope:
        name = header.group(2)
        inner = PyScope(kind=PyKind.CLASS, parent=scope, qualified=py_qualified(scope, name))
        scope.classes[name] = inner
        text = self.stm.text
        bases = re.compile(r"\s*(?:\[[^\]]*\]\s*)?\(").match(text, header.end())
        end = header.end()
        if bases is not None:
            for chunk, start in _chunks(text[bases.end() :], bases.end()):
                keyword = re.match(rf"\s*{NAME}\s*=(?!=)", chunk)
                skip = 0 if keyword is None else keyword.end()
                self.load(scope, start + skip, start + len(chunk))
                dotted = re.match(r"\s*([\w.]+)\s*(?:\[.*)?$", chunk, re.DOTALL)
                if keyword is None and dotted is not None:
                    inner.bases.append(dotted.group(1).split(".")[-1])
            end = self._closing(bases.end() - 1)
        self.inline(inner, self.colon(end))
        return inner

    def imports(self, scope: PyScope, at: int) -> None:
        text = self.stm.text
        from_import = re.compile(r"\s*from\s+([\w.\s]*?)\s*\bimport\b").match(text, at)
        if from_import is not None:
            if from_import.group(1).strip() == "__future__":
                return  # a compiler directive (see _PY_VISITORS)
            self.imported(scope, from_import.start(1), from_import.group(1))
            names = from_import.end()
        else:
            names = re.compile(r"\s*import\b").match(text, at).end()  # type: ignore[union-attr]
        for chunk, start in _chunks(text[names:].replace("(", " ").replace(")", " "), names):
            alias = re.search(rf"\bas\s+({NAME})", chunk)
            dotted = chunk[: alias.start()] if alias else chunk
            parts = list(IDENT.finditer(dotted))
            self.imported(scope, start, dotted)
            bound = alias.start(1) if alias else None
            if alias is None and parts:
                bound = (parts[-1] if from_import else parts[0]).start()
            if bound is not None:
                name = IDENT.match(chunk, bound).group()  # type: ignore[union-attr]
                self.add(PyOcc.BIND, start + bound, scope, name)
                scope.imports[name] = from_import is not None

    def imported(self, scope: PyScope, at: int, text: str) -> None:
        for part in IDENT.finditer(text):
            if part.group() not in PY_RESERVED:
                self.add(PyOcc.IMPORTED, at + part.start(), scope, part.group())

    def declaration(self, scope: PyScope, header: re.Match[str]) -> None:
        for name in IDENT.finditer(self.stm.text, header.end()):
            if header.group(1) == "global":
                scope.declared_global.add(name.group())
                self.add(PyOcc.REFER, name.start(), scope, name.group())
            else:
                scope.declared_nonlocal.add(name.group())

    def delete(self, scope: PyScope, at: int) -> None:
        for chunk, start in _chunks(self.stm.text[at:], at):
            bare = re.fullmatch(rf"\s*({NAME})\s*", chunk)
            if bare is not None:
                scope.bound.add(bare.group(1))
            else:
                self.load(scope, start, start + len(chunk))

    def compound(self, scope: PyScope, header: re.Match[str]) -> None:
        text, keyword = self.stm.text, header.group(1)
        colon = self.colon(header.end())
        end = len(text) if colon is None else colon
        if keyword == "for":
            within = next(
                (m for m in re.finditer(r"\bin\b", text[:end]) if self.stm.depths[m.start()] == 0),
                None,
            )
            if within is not None:
                self.store(scope, header.end(), within.start())
                self.load(scope, within.end(), end)
            else:
                self.load(scope, header.end(), end)
        elif keyword in ("with", "except"):
            position = header.end()
            for alias in _PY_AS.finditer(text, 0, end):
                if alias.start() < position:
                    continue
                self.load(scope, position, alias.start())
                self.store(scope, alias.start(1), alias.end(1))
                position = alias.end()
            self.load(scope, position, end)
        else:
            self.load(scope, header.end(), end)
        self.inline(scope, colon)

    def pattern(self, scope: PyScope, at: int, end: int) -> None:
        """A case pattern: bare names capture; names before `(` or `.` are read (a class, a
        value); `x=` names an attribute; the guard after `if` is read."""
        text = self.stm.text
        guard = re.compile(r"\bif\b").search(text, at, end)
        stop = end if guard is None else guard.start()
        for word in _PY_WORD.finditer(text, at, stop):
            if word.group("obj") is not None:
                self.member(scope, word, PyOcc.MEMBER)
            elif (name := word.group("name")) is not None and name not in PY_RESERVED:
                following = text[word.end() : stop].lstrip()[:1]
                if following in ("(", "["):
                    self.add(PyOcc.REFER, word.start(), scope, name)
                elif following != "=" and name != "_":
                    self.add(PyOcc.BIND, word.start(), scope, name)
        if guard is not None:
            self.load(scope, guard.end(), end)

    def simple(self, scope: PyScope, at: int) -> None:
        """An expression statement or an assignment (chained, annotated or augmented)."""
        text, depths = self.stm.text, self.stm.depths
        lam = re.compile(r"\blambda\b").search(text, at)
        limit = len(text) if lam is None else lam.start()
        operators = [
            m
            for m in re.finditer(
                r"(?<![=!<>:+\-*/%@&|^])(?:(?:\*\*|//|>>|<<|[-+*/%@&|^])=|=)(?!=)", text[:limit]
            )
            if m.start() >= at and depths[m.start()] == 0
        ]
        if operators and operators[0].group() != "=":  # `x += 1`
            target = re.fullmatch(rf"\s*({NAME})\s*", text[at : operators[0].start()])
            if target is not None:
                scope.bound.add(target.group(1))
            self.load(scope, at, len(text))
            return
        annotation = self.colon(at)
        ends = [m.start() for m in operators]
        if annotation is not None and (not ends or annotation < ends[0]):
            self.store(scope, at, annotation)  # `x: int = 3`, `x: int`
            self.load(scope, annotation + 1, ends[0] if ends else len(text))
            at = ends[0] + 1 if ends else len(text)
            ends = ends[1:]
        for end in ends:
            self.store(scope, at, end)
            at = end + 1
        self.load(scope, at, len(text))

    def store(self, scope: PyScope, at: int, end: int) -> None:
        """Assignment targets: `a`, `a, (b, *c)`, `self.x` bind; `a[i]`, `f().x` are read."""
        text = self.stm.text
        for chunk, start in _chunks(text[at:end], at):
            inner = re.fullmatch(r"\s*\*?\s*[(\[](.*)[)\]]\s*", chunk, re.DOTALL)
            bare = re.fullmatch(rf"\s*\*?\s*({NAME})\s*", chunk)
            member = re.fullmatch(rf"\s*({NAME})\s*\.\s*({NAME})\s*", chunk)
            if inner is not None:
                self.store(scope, start + inner.start(1), start + inner.end(1))
            elif bare is not None and bare.group(1) not in PY_RESERVED:
                self.add(PyOcc.BIND, start + bare.start(1), scope, bare.group(1))
            elif member is not None:
                word = _PY_WORD.match(text, start + member.start(1))
                if word is not None:
                    self.member(scope, word, PyOcc.MEMBER_STORE)
            else:
                self.load(scope, start, start + len(chunk))

    def member(self, scope: PyScope, word: re.Match[str], kind: PyOcc) -> None:
        obj, attr = word.group("obj"), word.group("attr")
        if obj in PY_RESERVED or obj in self.stm.locals:
            return
        self.add(PyOcc.REFER, word.start("obj"), scope, obj)
        self.add(kind, word.start("attr"), scope, obj, attr)

    def load(self, scope: PyScope, at: int, end: int) -> None:
        """Every name read from `at` to `end`."""
        text, depths = self.stm.text, self.stm.depths
        for word in _PY_WORD.finditer(text, at, end):
            if word.group("obj") is not None:
                self.member(scope, word, PyOcc.MEMBER)
                continue
            name = word.group("name")
            if name is None or name in PY_RESERVED or name in self.stm.locals:
                continue
            after = _PY_AFTER_NAME.match(text, word.end(), end)
            if after is not None and after.group(1) == ":=":
                self.add(PyOcc.BIND, word.start(), scope, name)
            elif after is not None and after.group(1) == "=" and depths[word.start()] > 0:
                continue  # a keyword argument names the callee's parameter
            else:
                self.add(PyOcc.REFER, word.start(), scope, name)
