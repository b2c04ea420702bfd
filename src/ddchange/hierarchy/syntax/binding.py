"""Names from the tree, the generic part: a grammar (`Grammar`) says which nodes bind, define or
use a name (binders), and `tree_names` walks a tree to collect what the chosen lines define and
use. The per-language binders are in c.py, javascript.py, go.py, rust.py and java.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum

from ddchange.hierarchy.syntax.base import Names
from ddchange.hierarchy.syntax.tree import (
    Node,
    _field,
    _text,
    fields,
    first_row,
    has_ancestor,
    last_row,
)
from ddchange.hierarchy.syntax.words import IDENT


@dataclass(frozen=True, kw_only=True)
class Grammar:
    """What the tree code needs to know about one language."""

    wheel: tuple[str, str]  # (module, function returning the language)
    separator: str  # joins qualified scope names
    scope_kinds: Mapping[str, str]  # definition node type -> scope kind
    identifiers: frozenset[str]  # leaf node types that name something
    binders: Mapping[str, Binder]  # node type -> the names it binds (see _Bind)
    ignored: frozenset[str]  # keywords and builtin types: never a use
    wrappers: frozenset[str] = frozenset()  # parents whose lines belong to the definition
    leading: frozenset[str] = frozenset()  # preceding siblings that belong to the definition


# --- names from the tree ----------------------------------------------------------------------


class Role(Enum):
    DEFINE = "define"  # a definition's name: defined, not a use
    DEFINE_AND_USE = "define and use"  # an import: binds a local name and refers to another
    BIND = "bind"  # a parameter or local variable where it is bound: neither


@dataclass(frozen=True)
class Bind:
    node: Node  # the identifier leaf (or, with `text`, the node the name comes from)
    role: Role
    text: str | None = None  # when the name is no identifier in the source (Go import paths)


Binder = Callable[[Node], Iterable[Bind]]


def tree_names(grammar: Grammar, root: Node, rows: frozenset[int]) -> Names:
    low, high = min(rows), max(rows)
    roles: dict[tuple[int, int], Role] = {}
    defined: set[str] = set()
    used: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if last_row(node) < low or first_row(node) > high:
            continue  # nothing on the wanted lines: skip the whole subtree
        # A parent is visited before its children, so a leaf's role is known when we reach it.
        for bind in grammar.binders.get(node.type, _binds_nothing)(node):
            roles.setdefault(_span(bind.node), bind.role)
            if bind.role is not Role.BIND and first_row(bind.node) in rows:
                defined.add(bind.text or _text(bind.node))
        # Unbound identifiers are uses; so are the ones an import binds and refers to at once.
        role = roles.get(_span(node), Role.DEFINE_AND_USE)
        wanted = node.type in grammar.identifiers and first_row(node) in rows
        if wanted and role is Role.DEFINE_AND_USE:
            used.add(_text(node))
        if node.type == "preproc_arg":
            used.update(_macro_body_uses(node, rows))
        stack.extend(node.children)
    return Names(frozenset(defined), frozenset(used - grammar.ignored))


def _macro_body_uses(body: Node, rows: frozenset[int]) -> Iterator[str]:
    """Identifiers in a #define's body, which tree-sitter leaves unparsed, minus its parameters.

    Only macro definitions: other directives' arguments (`#pragma once`) name nothing.
    """
    macro = body.parent
    if macro is None or macro.type not in ("preproc_def", "preproc_function_def"):
        return
    params = _field(macro, "parameters")
    bound = {_text(p) for p in params.named_children} if params is not None else set()
    text = _text(body)
    for token in IDENT.finditer(text):
        row = body.start_point.row + text.count("\n", 0, token.start())
        if row in rows and token.group() not in bound:
            yield token.group()


def _span(node: Node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def _binds_nothing(node: Node) -> Iterable[Bind]:
    return ()


def leaves(
    node: Node | None,
    types: frozenset[str],
    skip: frozenset[str],
    stop: frozenset[str] = frozenset(),
) -> Iterator[Node]:
    """Leaves of `types` under `node`, not looking into children whose field is in `skip`, nor
    below `node` into nodes of a `stop` type.

    Used on patterns: `skip` names the parts that are no bindings (types, default values, the
    keys of `{key: name}`), except that a pair pattern's value is the binding itself; `stop`
    holds paths (`Color::Red`), which refer to something and bind nothing.
    """
    stack = [] if node is None else [node]
    while stack:
        current = stack.pop()
        if current.type in types:
            yield current
            continue
        if current.type in stop and current is not node:
            continue
        for field, child in fields(current):
            if field not in skip or (current.type == "pair_pattern" and field == "value"):
                stack.append(child)


_PATHS = frozenset({"scoped_identifier", "scoped_type_identifier", "member_expression"})


def _binder(field: str, role: Role) -> Binder:
    """Binds every node in `field` (which must be an identifier leaf) with `role`."""

    def bind(node: Node) -> Iterator[Bind]:
        for child in node.children_by_field_name(field):
            yield Bind(child, role)

    return bind


def pattern_binder(field: str | None, role: Role, idents: frozenset[str]) -> Binder:
    """Binds the identifiers of a pattern (the whole node when `field` is None)."""

    def bind(node: Node) -> Iterator[Bind]:
        target = node if field is None else _field(node, field)
        for leaf in leaves(target, idents, _NOT_BOUND, _PATHS):
            yield Bind(leaf, role)

    return bind


_NOT_BOUND = frozenset({"type", "value", "default", "right", "key", "return_type", "decorator"})


def scoped_binder(field: str, idents: frozenset[str], functions: frozenset[str]) -> Binder:
    """A variable declaration: global ones define their names, local ones only bind them."""

    def bind(node: Node) -> Iterator[Bind]:
        role = Role.BIND if has_ancestor(node, functions) else Role.DEFINE
        for target in node.children_by_field_name(field):
            for leaf in leaves(target, idents, _NOT_BOUND, _PATHS):
                yield Bind(leaf, role)

    return bind


def merge(*binders: Binder) -> Binder:
    def bind(node: Node) -> Iterator[Bind]:
        for binder in binders:
            yield from binder(node)

    return bind


DEFINE_NAME = _binder("name", Role.DEFINE)


BIND_NAME = _binder("name", Role.BIND)
