"""An input as change units: the pieces `ddchange reduce` may take out of its files.

Owns cutting a file's bytes into pieces of one grain (lines, tokens, characters; syntax nodes
come from hierarchy/syntax) and writing an input back with some pieces taken out. A piece is
an `Edit`: a byte range of one file and what takes its place when it goes (nothing, for the
grains; a shorter text, for a transformation). An input with some edits applied is one more
configuration, as GOOD plus some hunks is one for a change set.

Pure: bytes in, bytes out. Ranges are half-open, into the file's current bytes.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

Contents = tuple[bytes, ...]  # an input: each file's bytes, in the order the files were given
# A piece of one grain, cut without making an `Edit` (a 50 MB input has 700,000 lines): its
# start, end and replacement.
Span = tuple[int, int, bytes]

# A token: a word (letters, digits, underscores, any non-ASCII byte), one mark of punctuation,
# or a run of white space.
_TOKEN = re.compile(rb"[\w\x80-\xff]+|\s+|[^\w\s\x80-\xff]")
_SOLID = re.compile(rb"[\w\x80-\xff]+|[^\w\s\x80-\xff]")  # a token that is no white space
_WORDS = re.compile(rb"[\w\x80-\xff]+")
# Each byte as its class for counting tokens: "a" a word's (`_WORDS`), " " white space, "."
# any other (a mark of punctuation, one token).
_CLASSES = bytes(
    ord("a") if _WORDS.fullmatch(bytes([b])) else ord(" ") if bytes([b]).isspace() else ord(".")
    for b in range(256)
)
_BETWEEN_WORDS = re.compile(rb"(?<=[\w\x80-\xff])\s+(?=[\w\x80-\xff])")


@dataclass(frozen=True, order=True, kw_only=True)
class Edit:
    """Bytes `start` to `end` of file number `file`, replaced by `replacement` when applied."""

    file: int
    start: int
    end: int
    replacement: bytes = b""

    @property
    def saved(self) -> int:
        return self.end - self.start - len(self.replacement)


def apply(contents: Contents, edits: Iterable[Edit]) -> Contents:
    """`contents` with `edits` applied; edits of one file must not overlap (ValueError)."""
    by_file: dict[int, list[Edit]] = {}
    for edit in edits:
        by_file.setdefault(edit.file, []).append(edit)
    out = list(contents)
    for number, mine in by_file.items():
        data, parts, at = contents[number], [], 0
        for edit in sorted(mine, key=_start):  # the passes give them in order: linear
            if edit.start < at:
                raise ValueError(f"edits of file {number} overlap at byte {edit.start}")
            parts += [data[at : edit.start], edit.replacement]
            at = edit.end
        parts.append(data[at:])
        out[number] = b"".join(parts)
    return tuple(out)


def _start(edit: Edit) -> int:
    return edit.start


def digest(contents: Contents) -> str:
    """The name of an input, as its records carry it: a hash of its files' bytes, in order,
    and its size (`size_named` reads it back)."""
    hashed = hashlib.sha256()
    for data in contents:
        hashed.update(len(data).to_bytes(8, "big"))
        hashed.update(data)
    return f"{hashed.hexdigest()}-{size(contents)}"


def size_named(name: str) -> int | None:
    """The size of the input named `name` by `digest`; None for another kind of name."""
    _, _, tail = name.rpartition("-")
    return int(tail) if tail.isdigit() else None


def size(contents: Contents) -> int:
    return sum(len(data) for data in contents)


def tokens(contents: Contents) -> int:
    """How many tokens (`_TOKEN`, white space not counted) the input holds: the size that
    the benchmarks compare."""
    return sum(_tokens_of(data) for data in contents)


@functools.lru_cache(maxsize=8)
def _tokens_of(data: bytes) -> int:
    """The tokens of one file, counted as `_SOLID` matches without making them: each byte
    classed (a word's, white space, a mark), then the marks and the starts of words counted,
    so that a 50 MB input takes a fraction of a second, not seconds; kept, as the report
    counts the input's and the result's more than once."""
    classed = data.translate(_CLASSES)
    return classed.count(b".") + (b" " + classed.replace(b".", b" ")).count(b" a")


def edits(number: int, spans: Iterable[Span]) -> list[Edit]:
    """The pieces `spans` of file `number` as edits."""
    return [Edit(file=number, start=s, end=e, replacement=r) for s, e, r in spans]


def lines(data: bytes) -> list[Span]:
    """Each line, its line ending with it."""
    ends = [m.end() for m in re.finditer(rb"\n", data)]
    starts = [0, *ends]
    if not data.endswith(b"\n"):
        ends.append(len(data))
    return [(s, e, b"") for s, e in zip(starts, ends, strict=False) if e > s]


def words(data: bytes) -> list[Span]:
    """Each token (`_TOKEN`), taken out so that the tokens beside it stay two: between two
    word characters, white space is no piece and another token leaves a space."""
    spans = []
    for match in _TOKEN.finditer(data):
        start, end = match.span()
        between = bool(_WORDS.match(data[start - 1 : start]) and _WORDS.match(data[end : end + 1]))
        if not (between and match.group().isspace()):
            spans.append((start, end, b" " * between))
    return spans


def joins_none(base: Contents, candidate: Contents) -> bool:
    """Whether every word of `candidate` (a run of word characters) is a word of `base`: taking
    tokens out of `base` made no new word by joining the two beside them."""
    return all(
        set(_WORDS.findall(after)) <= _words_of(before)
        for before, after in zip(base, candidate, strict=True)
    )


@functools.lru_cache(maxsize=4)
def _words_of(data: bytes) -> frozenset[bytes]:
    """The words of an input's file, kept: every candidate of a round is set against it."""
    return frozenset(_WORDS.findall(data))


def chars(data: bytes) -> list[Span]:
    """Each character (each byte where the file is no UTF-8)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return [(i, i + 1, b"") for i in range(len(data))]
    spans, at = [], 0
    for char in text:
        width = len(char.encode("utf-8"))
        spans.append((at, at + width, b""))
        at += width
    return spans


def ranges(number: int, spans: Sequence[tuple[int, int]]) -> list[Edit]:
    """The byte ranges `spans` of file `number` (syntax nodes), as edits that remove them."""
    return [Edit(file=number, start=start, end=end) for start, end in spans if end > start]


# -- rewrites: the pieces that shorten rather than go ------------------------------------------

_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(rb"\d+(?:\.\d+)?")
_STRING = re.compile(rb""""(?:[^"\\\n]|\\.)+"|'(?:[^'\\\n]|\\.)+'""")
_OPEN, _CLOSE = b"([{", b")]}"


def renames(contents: Contents, offered: Collection[bytes] = ()) -> list[list[Edit]]:
    """Each name (a word that starts with a letter or _) with every one of its uses, renamed to
    a shorter name that the input does not hold: the names that save the most take the
    shortest new ones; those `offered` before are left out."""
    uses: dict[bytes, list[Edit]] = {}
    for number, data in enumerate(contents):
        for match in _TOKEN.finditer(data):
            if _NAME.fullmatch(match.group()):
                uses.setdefault(match.group(), []).append(
                    Edit(file=number, start=match.start(), end=match.end())
                )
    fresh = _fresh_names(set(uses))
    atoms = []
    for name in sorted(uses, key=lambda n: (-(len(n) - 1) * len(uses[n]), n)):
        if name in offered:
            continue
        new = next(fresh)
        if len(new) >= len(name):
            break  # the others save less still
        atoms.append(
            [Edit(file=e.file, start=e.start, end=e.end, replacement=new) for e in uses[name]]
        )
    return atoms


def _fresh_names(taken: set[bytes]) -> Iterator[bytes]:
    """a, b, ..., z, aa, ab, ...: the names not in `taken`, shortest first."""
    letters = [bytes([c]) for c in range(ord("a"), ord("z") + 1)]
    names = letters
    while True:
        for name in names:
            if name not in taken:
                yield name
        names = [a + b for a in names for b in letters]


def dedents(contents: Contents, *, by_depth: bool = True) -> list[list[Edit]]:
    """Per file, one rewrite of all its indentation (the spaces that start a line with more on
    it): by depth, each line indented one space for each indentation still open above it that
    is smaller than its own, as Python's tokenizer counts its INDENTs (where no line starts with
    a tab); else each width divided by the file's unit, the greatest common divisor of the
    widths (four spaces a level become one). Depth gives no line more than the unit does: it
    also closes the gaps that lines taken out left (a line of depth 3 under one of depth 1)."""
    atoms = []
    for number, data in enumerate(contents):
        lead = [(m.start(1), m.end(1)) for m in re.finditer(rb"(?m)^( +)\S", data)]
        if by_depth and not re.search(rb"(?m)^ *\t", data):
            widths = _depths(data)
            edits = [
                Edit(file=number, start=s, end=e, replacement=b" " * widths[s])
                for s, e in lead
                if widths[s] < e - s
            ]
        else:
            unit = math.gcd(*(end - start for start, end in lead)) if lead else 0
            edits = [
                Edit(file=number, start=s, end=e, replacement=b" " * ((e - s) // unit))
                for s, e in lead
                if unit > 1
            ]
        if edits:
            atoms.append(edits)
    return atoms


def _depths(data: bytes) -> dict[int, int]:
    """Where each line that holds more than spaces starts, its depth: how many indentations
    are open above it, smaller than its own (a line less indented closes those wider)."""
    open_: list[int] = [0]
    depths = {}
    for match in re.finditer(rb"(?m)^( *)\S", data):
        width = len(match.group(1))
        while open_[-1] > width:
            open_.pop()
        if open_[-1] < width:
            open_.append(width)
        depths[match.start()] = len(open_) - 1
    return depths


def spaces(contents: Contents) -> list[list[Edit]]:
    """Each run of white space that can be shorter: inside a line, one space; over several
    lines, one line break and the last line's indentation."""
    atoms = []
    for number, data in enumerate(contents):
        for match in re.finditer(rb"\s{2,}", data):
            run = match.group()
            if b"\n" in run:
                shorter = b"\n" + run[run.rindex(b"\n") + 1 :]
            elif match.start() == 0 or data[match.start() - 1 : match.start()] == b"\n":
                continue  # indentation: `dedents` shortens it
            else:
                shorter = b" "
            if len(shorter) < len(run):
                atoms.append(
                    [Edit(file=number, start=match.start(), end=match.end(), replacement=shorter)]
                )
    return atoms


def joins(contents: Contents) -> list[list[Edit]]:
    """Each run of white space between two words, taken out: the two become one word."""
    return [
        [Edit(file=number, start=match.start(), end=match.end())]
        for number, data in enumerate(contents)
        for match in _BETWEEN_WORDS.finditer(data)
    ]


def literals(contents: Contents, *, digits: bool = False) -> list[list[Edit]]:
    """Each number of two or more characters as 0, and each quoted string emptied; with
    `digits`, each other number but 0 as 0 too (as many bytes: a bit-field's width of 3 as 0,
    which C allows only where the field's name has gone)."""
    atoms = []
    for number, data in enumerate(contents):
        for match in _TOKEN.finditer(data):
            literal = match.group()
            if _NUMBER.fullmatch(literal) and (len(literal) > 1 or digits and literal != b"0"):
                atoms.append(
                    [Edit(file=number, start=match.start(), end=match.end(), replacement=b"0")]
                )
        for match in _STRING.finditer(data):
            quote = match.group()[:1]
            atoms.append(
                [Edit(file=number, start=match.start(), end=match.end(), replacement=quote * 2)]
            )
    return _apart(atoms)


def brackets(contents: Contents, depth: int, *, keep: str) -> list[list[Edit]] | None:
    """The balanced pairs of brackets `depth` levels deep (0: outermost), each taken out with
    its content (`keep` ""), emptied (`keep` "brackets") or unwrapped, only the two brackets
    taken out (`keep` "content"); None where no pair is that deep."""
    atoms: list[list[Edit]] = []
    deep = False
    for number, data in enumerate(contents):
        for start, end, level in _pairs(data):
            if level != depth:
                continue
            deep = True
            if not keep:
                atoms.append([Edit(file=number, start=start, end=end)])
            elif keep == "brackets" and end - start > 2:
                atoms.append([Edit(file=number, start=start + 1, end=end - 1)])
            elif keep == "content":
                atoms.append(
                    [Edit(file=number, start=start, end=start + 1),
                     Edit(file=number, start=end - 1, end=end)]
                )  # fmt: skip
    return atoms if deep else None


def _pairs(data: bytes) -> list[tuple[int, int, int]]:
    """Each balanced pair of brackets in `data`: its range (brackets included) and how deep it
    is; a bracket that closes another kind or closes nothing ends no pair."""
    stack: list[tuple[int, int]] = []
    pairs = []
    for at, byte in enumerate(data):
        if byte in _OPEN:
            stack.append((at, byte))
        elif byte in _CLOSE:
            if stack and _OPEN.index(stack[-1][1]) == _CLOSE.index(byte):
                start, _ = stack.pop()
                pairs.append((start, at + 1, len(stack)))
            else:
                stack.clear()
    return pairs


def _apart(atoms: list[list[Edit]]) -> list[list[Edit]]:
    """`atoms` less those that overlap an earlier one (a number inside a string)."""
    kept: list[list[Edit]] = []
    for atom in sorted(atoms, key=lambda a: (a[0].file, a[0].start)):
        last = kept[-1][0] if kept else None
        if last is None or last.file != atom[0].file or last.end <= atom[0].start:
            kept.append(atom)
    return kept
