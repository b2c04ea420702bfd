"""Python: names resolved by scope. Python names are matched across the project without knowing
what they refer to, so an unscoped match is mostly noise: every `def parse` would match every
`obj.parse`. So for Python both modes resolve names the way the interpreter does (LEGB): they
collect the scopes (module, classes, functions, lambdas, comprehensions) with the names each
binds, and the occurrences of names with their scope; `py_resolve` turns each occurrence into
the project-level names it defines or uses. This module holds that model and the resolver;
python_tree.py and python_scan.py fill it from a tree or from the text.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from ddchange.hierarchy.syntax.tree import Node
from ddchange.hierarchy.syntax.words import _words

# --- Python: names resolved by scope ----------------------------------------------------------
# Python names are matched across the project without knowing what they refer to, so an
# unscoped match is mostly noise: every `def parse` would match every `obj.parse`, and every
# parameter called `name` every other `name`. So for Python both modes resolve names the way the
# interpreter does (LEGB) before answering: they first collect, over the whole file, the scopes
# (module, classes, functions, lambdas, comprehensions) with the names each binds, and the
# occurrences of names with the scope they occur in; resolution then turns each occurrence into
# the project-level names it defines or uses (see `Names`). The tree and the scan differ only in
# how they find scopes and occurrences; one resolver decides for both, so the modes agree.


class PyKind(Enum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"  # def, lambda, comprehension: Python's function scopes


# eq=False: scopes are compared and hashed by identity (a class's bases may be walked twice).
@dataclass(eq=False, kw_only=True)
class PyScope:
    kind: PyKind
    parent: PyScope | None
    qualified: str | None = None  # a class reachable from the module: "Outer.Inner"
    owner: PyScope | None = None  # a method's class
    self_name: str | None = None  # a method's first parameter (self, cls), unless static
    comprehension: bool = False  # `:=` in a comprehension binds in the scope around it
    bound: set[str] = dataclasses.field(default_factory=set)
    declared_global: set[str] = dataclasses.field(default_factory=set)
    declared_nonlocal: set[str] = dataclasses.field(default_factory=set)
    classes: dict[str, PyScope] = dataclasses.field(default_factory=dict)
    # Import-bound names -> whether by `from m import name` (then maybe a class, not a module).
    imports: dict[str, bool] = dataclasses.field(default_factory=dict)
    bases: list[str] = dataclasses.field(default_factory=list)  # a class's, last dotted part


class PyOcc(Enum):
    BIND = "bind"  # a name bound in its scope (def, class, assignment, import)
    REFER = "refer"  # a bare name read
    MEMBER = "member"  # `obj.attr` read, obj a bare name
    MEMBER_STORE = "member store"  # `obj.attr = ...`, obj a bare name
    IMPORTED = "imported"  # a name an import refers to: always a use


@dataclass(frozen=True, kw_only=True)
class _PyOccurrence:
    kind: PyOcc
    row: int  # 0-based
    scope: PyScope
    name: str
    member: str = ""  # the attribute of MEMBER and MEMBER_STORE


@dataclass
class PyFound:
    """What a pass over one file collects: its scopes (through `module`) and occurrences."""

    module: PyScope
    occurrences: list[_PyOccurrence] = dataclasses.field(default_factory=list)

    def add(self, kind: PyOcc, row: int, scope: PyScope, name: str, member: str = "") -> None:
        if kind is PyOcc.BIND:
            scope.bound.add(name)
        self.occurrences.append(
            _PyOccurrence(kind=kind, row=row, scope=scope, name=name, member=member)
        )


_PY_MODULE_DUNDERS = _words("__file__ __path__ __builtins__ __cached__ __annotations__")


# Names every module sees without binding them. A module that binds one (`def format`) shadows it.
_PY_BUILTINS = frozenset(dir(builtins)) | _PY_MODULE_DUNDERS


# Every module binds its own, and no module reads another's by name: matching them only joins
# unrelated modules.
_PY_PER_MODULE = _words("__all__")


# Resolution -------------------------------------------------------------------------------------


def _py_lookup(scope: PyScope, name: str) -> PyScope | None:
    """The scope whose binding `name` refers to from `scope` (LEGB), None when the module does
    not bind it (a builtin, or a name from a star import)."""
    current: PyScope | None = scope
    while current is not None:
        if current.kind is PyKind.FUNCTION:
            if name in current.declared_global:
                return _py_module(current)
            if name in current.bound and name not in current.declared_nonlocal:
                return current
        elif current.kind is PyKind.CLASS:
            # A class body's names are visible in the body itself, not in its methods.
            if current is scope and name in current.bound:
                return current
        elif name in current.bound:
            return current
        current = current.parent
    return None


def _py_module(scope: PyScope) -> PyScope:
    while scope.parent is not None:
        scope = scope.parent
    return scope


def py_resolve(occurrence: _PyOccurrence) -> tuple[set[str], set[str]]:
    """(defined, used) project-level names of one occurrence."""
    kind, scope, name = occurrence.kind, occurrence.scope, occurrence.name
    if name in _PY_PER_MODULE and kind in (PyOcc.BIND, PyOcc.REFER):
        return set(), set()
    if kind is PyOcc.IMPORTED:
        return set(), {name}
    if kind is PyOcc.BIND:
        return _py_definition(scope, name), set()
    if kind is PyOcc.REFER:
        return set(), _py_reference(scope, name)
    return _py_member(occurrence)


def _py_definition(scope: PyScope, name: str) -> set[str]:
    if scope.kind is PyKind.MODULE or name in scope.declared_global:
        return {name}
    if scope.kind is PyKind.CLASS and scope.qualified is not None:
        return {f"{scope.qualified}.{name}"}
    return set()  # a parameter or local; or a member of a class no other module can name


def _py_reference(scope: PyScope, name: str) -> set[str]:
    found = _py_lookup(scope, name)
    if found is None:
        return set() if name in _PY_BUILTINS else {name}
    if found.kind is PyKind.MODULE:
        return {name}
    if found.kind is PyKind.CLASS and found.qualified is not None:
        return {f"{found.qualified}.{name}"}
    return set()


def _py_member(occurrence: _PyOccurrence) -> tuple[set[str], set[str]]:
    """`obj.attr`: a member of the method's own class (self/cls), of a class, or of an imported
    module; of any other object Python cannot tell without running, so it names nothing."""
    obj, attr = occurrence.name, occurrence.member
    found = _py_lookup(occurrence.scope, obj)
    if found is None:
        return set(), set()
    owner = found.owner
    if obj == found.self_name and owner is not None and owner.qualified is not None:
        if occurrence.kind is PyOcc.MEMBER_STORE:
            return {f"{owner.qualified}.{attr}"}, set()
        return set(), _py_members(owner, attr)
    if obj in found.classes:
        return set(), _py_members(found.classes[obj], attr)
    if obj in found.imports:
        # `from m import X`: X may be a class as well as a module.
        return set(), {attr, f"{obj}.{attr}"} if found.imports[obj] else {attr}
    return set(), set()


def _py_members(cls: PyScope, attr: str) -> set[str]:
    """The names `attr` may be found under through `cls` and its bases (the file's own classes
    are followed to their bases; another module's class contributes "Base.attr")."""
    names: set[str] = set()
    seen: set[PyScope] = set()
    todo = [cls]
    while todo:
        current = todo.pop()
        if current in seen or current.qualified is None or current.parent is None:
            continue
        seen.add(current)
        names.add(f"{current.qualified}.{attr}")
        for base in current.bases:
            where = _py_lookup(current.parent, base)
            if where is not None and base in where.classes:
                todo.append(where.classes[base])
            elif base not in _PY_BUILTINS:
                names.add(f"{base}.{attr}")
    return names


# Occurrences from the tree ----------------------------------------------------------------------


class PyCtx(Enum):
    LOAD = "load"  # bare names are read
    STORE = "store"  # bare names are bound (assignment and loop targets)
    PATTERN = "pattern"  # a case pattern: bare names capture, dotted names are read


PyTask = tuple[Node, PyScope, PyCtx]


PyVisit = Callable[[PyFound, Node, PyScope], Iterable[PyTask]]
