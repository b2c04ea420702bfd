"""tree-sitter plumbing: the typed view of a node that the rest of the package uses (`Node`,
`_Point`) and small helpers to read a node's text, rows and fields. Nothing here knows a
language; grammars.py loads them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

# --- tree-sitter plumbing ---------------------------------------------------------------------
# The node interface we rely on, spelled out so that mypy checks this module whether or not the
# optional tree_sitter package is installed (CI installs only the test extra).


class _Point(Protocol):
    @property
    def row(self) -> int: ...
    @property
    def column(self) -> int: ...


class Node(Protocol):
    @property
    def type(self) -> str: ...
    @property
    def start_byte(self) -> int: ...
    @property
    def end_byte(self) -> int: ...
    @property
    def start_point(self) -> _Point: ...
    @property
    def end_point(self) -> _Point: ...
    @property
    def children(self) -> Sequence[Node]: ...
    @property
    def named_children(self) -> Sequence[Node]: ...
    @property
    def is_named(self) -> bool: ...
    @property
    def has_error(self) -> bool: ...
    @property
    def parent(self) -> Node | None: ...
    @property
    def prev_named_sibling(self) -> Node | None: ...
    @property
    def prev_sibling(self) -> Node | None: ...
    @property
    def next_sibling(self) -> Node | None: ...
    @property
    def text(self) -> bytes | None: ...
    def child_by_field_name(self, name: str, /) -> Node | None: ...
    def children_by_field_name(self, name: str, /) -> Sequence[Node]: ...
    def field_name_for_child(self, child_index: int, /) -> str | None: ...


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def first_row(node: Node) -> int:
    return node.start_point.row


def last_row(node: Node) -> int:
    # A node that ends with its line's newline ends at column 0 of the next row.
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def _field(node: Node | None, name: str) -> Node | None:
    return None if node is None else node.child_by_field_name(name)


def fields(node: Node) -> Iterator[tuple[str | None, Node]]:
    for index, child in enumerate(node.children):
        yield node.field_name_for_child(index), child


def has_ancestor(node: Node, types: frozenset[str]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in types:
            return True
        parent = parent.parent
    return False
