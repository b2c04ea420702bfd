"""Syntax trees of inputs for `ddchange reduce`: the nodes of a file level by level, and the
nodes that a smaller descendant could stand in for (hoisting, as Perses does).

The programming languages are those of grammars.py; the data formats (HTML, XML, JSON, CSS,
TOML, YAML) have no scopes or names to find, only a parser, from their own wheels (the
`syntax` extra), loaded the same lazy way: a missing wheel means no node level for that
format, never an error.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from ddchange.hierarchy.syntax.base import language_of, syntax_disabled
from ddchange.hierarchy.syntax.grammars import _parser
from ddchange.hierarchy.syntax.tree import Node

# suffix -> (module, factory) of the data formats' grammars
_FORMATS = {
    ".html": ("tree_sitter_html", "language"),
    ".htm": ("tree_sitter_html", "language"),
    ".xml": ("tree_sitter_xml", "language_xml"),
    ".svg": ("tree_sitter_xml", "language_xml"),
    ".json": ("tree_sitter_json", "language"),
    ".jsonl": ("tree_sitter_json", "language"),  # JSON lines: a value a line
    ".ndjson": ("tree_sitter_json", "language"),
    ".css": ("tree_sitter_css", "language"),
    ".toml": ("tree_sitter_toml", "language"),
    ".yaml": ("tree_sitter_yaml", "language"),
    ".yml": ("tree_sitter_yaml", "language"),
}


@functools.cache
def _format_parser(module: str, factory: str) -> Any:
    """A parser for a data format, or None when its wheel is missing or does not load."""
    try:
        binding = importlib.import_module("tree_sitter")
        grammar = getattr(importlib.import_module(module), factory)()
        return binding.Parser(binding.Language(grammar))
    except Exception:  # the documented contract: no node level for this format
        return None


def _root(path: str, data: bytes) -> Node | None:
    """The root of `data`'s tree where a grammar knows `path`'s kind of file."""
    if syntax_disabled():
        return None
    wheel = _FORMATS.get(PurePosixPath(path).suffix.lower())
    lang = language_of(path)
    parser = _format_parser(*wheel) if wheel else _parser(lang) if lang else None
    if parser is None:
        return None
    try:
        root: Node = parser.parse(data).root_node
    except Exception:  # an internal failure of the C library: no tree, no node level
        return None
    return root


def has_tree(path: str) -> bool:
    """Whether a grammar knows `path`'s kind of file (and its wheel loads)."""
    return _root(path, b"") is not None


def parses(path: str, data: bytes) -> bool | None:
    """Whether `data` parses without an error by the grammar of `path`'s kind of file; None
    where no grammar knows it."""
    root = _root(path, data)
    return None if root is None else not root.has_error


def nodes_at(path: str, data: bytes, depth: int) -> list[tuple[int, int]] | None:
    """The byte ranges of the named nodes `depth` levels below the root of `data`'s tree, in
    order, each with the comma after it where one follows (an element of a list goes with its
    separator, as Perses takes a list's elements), but for the children their grammar requires
    (`_required`); None where there is no tree or no node that deep."""
    root = _root(path, data)
    if root is None:
        return None
    parents = _level(root, depth - 1)
    pairs = [(node, child) for node in parents for child in node.named_children]
    if not pairs:
        return None
    required = _required(path, data, root, parents)
    level = [child for node, child in pairs if (node.type, child.type) not in required]
    spans, reached = [], 0
    for node in level:
        start, end = _whole_lines(
            data, node.start_byte, _separator(node.next_sibling) or node.end_byte
        )
        start = max(start, reached)  # where a node before took in the white space between
        if end > start:
            spans.append((start, end))
            reached = end
    return spans


def _required(path: str, data: bytes, root: Node, parents: list[Node]) -> set[tuple[str, str]]:
    """The kinds of child that the grammar requires of `parents` of a kind, as far as the file
    shows: every one of at least two of that kind has exactly one, and taking one out leaves a
    file the grammar refuses (one parse tries it). An element's start tag, an attribute's name:
    not an option of the file (Perses takes out only optional children), and taken out with
    its siblings, it is the parent taken out, a level up. None of them where the file does
    not parse."""
    if root.has_error:
        return set()
    seen: dict[str, int] = {}
    had: dict[tuple[str, str], list[Node]] = {}
    for parent in parents:
        seen[parent.type] = seen.get(parent.type, 0) + 1
        kinds = [child.type for child in parent.named_children]
        for child in parent.named_children:
            if kinds.count(child.type) == 1:
                had.setdefault((parent.type, child.type), []).append(child)
    return {
        pair
        for pair, children in had.items()
        if len(children) == seen[pair[0]] >= 2
        and not parses(path, data[: children[0].start_byte] + data[children[0].end_byte :])
    }


def _whole_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """`start` to `end`, or the whole lines they span where nothing else is on them (so that a
    node taken out leaves no blank line behind)."""
    before = data.rfind(b"\n", 0, start) + 1
    after = data.find(b"\n", end)
    after = len(data) if after < 0 else after + 1
    alone = not data[before:start].strip() and not data[end:after].strip()
    return (before, after) if alone else (start, end)


def lasts_at(path: str, data: bytes, depth: int) -> list[tuple[int, int]]:
    """The byte ranges of the last elements of lists `depth` levels below the root, each with
    the comma before it: the nodes `nodes_at` gives no comma to."""
    root = _root(path, data)
    if root is None:
        return []
    return [
        (node.prev_sibling.start_byte, node.end_byte)
        for node in _level(root, depth)
        if node.prev_sibling is not None
        and _separator(node.prev_sibling) is not None
        and _separator(node.next_sibling) is None
    ]


def _level(root: Node, depth: int) -> list[Node]:
    level = [root]
    for _ in range(depth):
        level = [child for node in level for child in node.named_children]
    return level


def _separator(node: Node | None) -> int | None:
    """Where `node` ends, if it is a comma."""
    return node.end_byte if node is not None and node.type == "," else None


def every_node(path: str, data: bytes) -> list[tuple[int, int]]:
    """The byte ranges of every named node of `data`'s tree but the root, outermost first."""
    root = _root(path, data)
    level, spans = [] if root is None else list(root.named_children), []
    while level:
        spans += [
            (node.start_byte, node.end_byte) for node in level if node.end_byte > node.start_byte
        ]
        level = [child for node in level for child in node.named_children]
    return spans


def hoists_at(path: str, data: bytes, depth: int) -> list[tuple[int, int, int, int]]:
    """For each named node `depth` levels below the root that a smaller descendant can stand
    in for, the node's range and the descendant's: the node may be replaced by it. Where
    `data` parses without an error, the descendant is the largest of any kind (of the
    `_TRIES` largest) with which the file still parses, as Perses takes a descendant of a
    compatible kind (`a = f()` becomes `f()`, a function its body's statement); elsewhere,
    the largest of the node's own kind."""
    root = _root(path, data)
    if root is None:
        return []
    whole = not root.has_error
    hoists = []
    for node in _level(root, depth):
        inner = _fitting(path, data, node) if whole else _largest_of_kind(node, node.type)
        if inner is not None:
            hoists.append((node.start_byte, node.end_byte, inner.start_byte, inner.end_byte))
    return hoists


# The descendants a node's hoist tries, largest first, for one the file still parses with.
_TRIES = 6


def _fitting(path: str, data: bytes, node: Node) -> Node | None:
    """The largest named descendant of `node`, smaller than it, that can replace it with the
    file still parsing without an error (of the _TRIES largest)."""
    size = node.end_byte - node.start_byte
    below = [n for n in _below(node) if 0 < n.end_byte - n.start_byte < size]
    below.sort(key=lambda n: n.start_byte - n.end_byte)  # largest first, stable
    for inner in below[:_TRIES]:
        text = data[inner.start_byte : inner.end_byte]
        if parses(path, data[: node.start_byte] + text + data[node.end_byte :]):
            return inner
    return None


def _largest_of_kind(node: Node, kind: str) -> Node | None:
    """The first descendant of `node` of type `kind` met breadth first (the largest)."""
    size = node.end_byte - node.start_byte
    return next(
        (n for n in _below(node) if n.type == kind and n.end_byte - n.start_byte < size), None
    )


def _below(node: Node) -> Iterator[Node]:
    """The named descendants of `node`, breadth first."""
    queue = list(node.named_children)
    while queue:
        current = queue.pop(0)
        yield current
        queue += current.named_children
