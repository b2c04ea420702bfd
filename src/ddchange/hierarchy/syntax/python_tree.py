"""Python's scopes and occurrences read from the tree-sitter tree (`py_tree_found`), for the
resolver in python.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ddchange.hierarchy.syntax.binding import leaves
from ddchange.hierarchy.syntax.python import (
    PyCtx,
    PyFound,
    PyKind,
    PyOcc,
    PyScope,
    PyTask,
    PyVisit,
)
from ddchange.hierarchy.syntax.tree import Node, _field, _text, fields, first_row
from ddchange.hierarchy.syntax.words import PY_IDENTS


def py_tree_found(root: Node) -> PyFound:
    found = PyFound(PyScope(kind=PyKind.MODULE, parent=None))
    # A work list, not recursion: long operator chains make deep trees.
    stack: list[PyTask] = [(root, found.module, PyCtx.LOAD)]
    while stack:
        node, scope, ctx = stack.pop()
        stack.extend(_py_visit(found, node, scope, ctx))
    return found


def _py_visit(found: PyFound, node: Node, scope: PyScope, ctx: PyCtx) -> Iterable[PyTask]:
    if node.type == "identifier":
        kind = PyOcc.REFER if ctx is PyCtx.LOAD else PyOcc.BIND
        found.add(kind, first_row(node), scope, _text(node))
        return ()
    if ctx is PyCtx.STORE:
        return _py_store(found, node, scope)
    if ctx is PyCtx.PATTERN:
        return _py_pattern(found, node, scope)
    visit = _PY_VISITORS.get(node.type)
    if visit is not None:
        return visit(found, node, scope)
    return _py_load(scope, node.named_children)


def _py_load(scope: PyScope, nodes: Iterable[Node | None]) -> list[PyTask]:
    return [(n, scope, PyCtx.LOAD) for n in nodes if n is not None]


def _py_store(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    if node.type == "attribute":
        return _py_attribute(found, node, scope, PyOcc.MEMBER_STORE)
    if node.type in _PY_TARGET_LISTS:
        return [(child, scope, PyCtx.STORE) for child in node.named_children]
    return [(node, scope, PyCtx.LOAD)]  # `a[i] = ...` reads a and i


_PY_TARGET_LISTS = frozenset(
    {
        "pattern_list",
        "tuple_pattern",
        "list_pattern",
        "tuple",
        "list",
        "expression_list",
        "parenthesized_expression",
        "list_splat_pattern",
        "list_splat",
        "as_pattern_target",
    }
)


def _py_pattern(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    """`case Point(x=0, y=yy) | [q, *rest]`: captures yy, q, rest and reads Point; a dotted
    name (`Color.RED`) is a value to compare with, so it is read."""
    parts = node.named_children
    if node.type == "dotted_name":
        if len(parts) == 1 and _text(parts[0]) != "_":
            found.add(PyOcc.BIND, first_row(parts[0]), scope, _text(parts[0]))
            return ()
        return _py_dotted(found, node, scope)
    if node.type == "class_pattern" and parts and parts[0].type == "dotted_name":
        cls, parts = parts[0], parts[1:]
        _py_dotted(found, cls, scope)
    elif node.type == "keyword_pattern" and parts and parts[0].type == "identifier":
        parts = parts[1:]  # the attribute matched against, not a name in scope
    elif node.type == "dict_pattern":
        keys = node.children_by_field_name("key")
        return [*_py_load(scope, keys), *_py_patterns(scope, _py_other_children(node, "key"))]
    return _py_patterns(scope, parts)


def _py_patterns(scope: PyScope, nodes: Iterable[Node]) -> list[PyTask]:
    return [(n, scope, PyCtx.PATTERN) for n in nodes]


def _py_dotted(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    """`a.b.c` as a dotted_name: reads a, and b as a member of a."""
    parts = node.named_children
    if parts:
        found.add(PyOcc.REFER, first_row(parts[0]), scope, _text(parts[0]))
    if len(parts) > 1:
        found.add(PyOcc.MEMBER, first_row(parts[1]), scope, _text(parts[0]), _text(parts[1]))
    return ()


def _py_attribute(
    found: PyFound, node: Node, scope: PyScope, kind: PyOcc = PyOcc.MEMBER
) -> Iterable[PyTask]:
    obj, attr = _field(node, "object"), _field(node, "attribute")
    if obj is None or attr is None or obj.type != "identifier":
        return _py_load(scope, [obj])  # `f().x`, `a.b.c`: only the object is resolved
    found.add(PyOcc.REFER, first_row(obj), scope, _text(obj))
    found.add(kind, first_row(attr), scope, _text(obj), _text(attr))
    return ()


def _py_function(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    name = _field(node, "name")
    if name is not None:
        found.add(PyOcc.BIND, first_row(name), scope, _text(name))
    method = scope.kind is PyKind.CLASS
    inner = PyScope(kind=PyKind.FUNCTION, parent=scope, owner=scope if method else None)
    tasks = _py_parameters(inner, _field(node, "parameters"))
    if method and not _py_is_static(node):
        inner.self_name = _py_first_parameter(_field(node, "parameters"))
    for parameter in leaves(_field(node, "type_parameters"), PY_IDENTS, frozenset()):
        inner.bound.add(_text(parameter))
    # Decorators, defaults and annotations are evaluated where the def stands; the body inside.
    return [
        *tasks,
        *_py_load(scope, [_field(node, "return_type")]),
        *_py_load(inner, [_field(node, "body")]),
    ]


def _py_parameters(inner: PyScope, parameters: Node | None) -> list[PyTask]:
    """Binds the parameter names in `inner`; defaults and annotations are read outside it."""
    outer = inner.parent
    if parameters is None or outer is None:
        return []
    tasks: list[PyTask] = []
    for parameter in parameters.named_children:
        name = _py_parameter_name(parameter)
        if name is not None:
            inner.bound.add(_text(name))
        tasks += _py_load(outer, [_field(parameter, "type"), _field(parameter, "value")])
    return tasks


def _py_parameter_name(parameter: Node) -> Node | None:
    if parameter.type == "identifier":
        return parameter
    named = _field(parameter, "name")
    if named is not None:
        return named
    # typed_parameter, *args, **kwargs: the identifier is a plain child.
    for child in parameter.named_children:
        if child.type in ("identifier", "list_splat_pattern", "dictionary_splat_pattern"):
            return _py_parameter_name(child)
    return None


def _py_first_parameter(parameters: Node | None) -> str | None:
    first = next(iter(parameters.named_children), None) if parameters is not None else None
    if first is None or first.type in ("list_splat_pattern", "dictionary_splat_pattern"):
        return None
    name = _py_parameter_name(first)
    return None if name is None else _text(name)


def _py_is_static(node: Node) -> bool:
    parent = node.parent
    if parent is None or parent.type != "decorated_definition":
        return False
    decorators = (c for c in parent.named_children if c.type == "decorator")
    return any(_text(d).lstrip("@").strip() == "staticmethod" for d in decorators)


def _py_class(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    name = _field(node, "name")
    inner = PyScope(kind=PyKind.CLASS, parent=scope)
    if name is not None:
        found.add(PyOcc.BIND, first_row(name), scope, _text(name))
        inner.qualified = py_qualified(scope, _text(name))
        scope.classes[_text(name)] = inner
    tasks: list[PyTask] = []
    superclasses = _field(node, "superclasses")
    for base in superclasses.named_children if superclasses is not None else ():
        if base.type == "keyword_argument":  # metaclass=M
            tasks += _py_load(scope, [_field(base, "value")])
            continue
        tasks += _py_load(scope, [base])
        base_name = _py_base_name(base)
        if base_name is not None:
            inner.bases.append(base_name)
    return [*tasks, *_py_load(inner, [_field(node, "body")])]


def _py_base_name(base: Node | None) -> str | None:
    """`Base`, `mod.Base` and `Base[T]` all name Base."""
    if base is not None and base.type == "subscript":
        base = _field(base, "value")
    if base is not None and base.type == "attribute":
        base = _field(base, "attribute")
    return _text(base) if base is not None and base.type == "identifier" else None


def py_qualified(scope: PyScope, name: str) -> str | None:
    """A class's project-level name; None inside a function, where no other module sees it."""
    if scope.kind is PyKind.MODULE:
        return name
    if scope.kind is PyKind.CLASS and scope.qualified is not None:
        return f"{scope.qualified}.{name}"
    return None


def _py_lambda(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    inner = PyScope(kind=PyKind.FUNCTION, parent=scope)
    tasks = _py_parameters(inner, _field(node, "parameters"))
    return [*tasks, *_py_load(inner, [_field(node, "body")])]


def _py_comprehension(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    """Its own scope: the targets are local to it; the first iterable is read outside."""
    inner = PyScope(kind=PyKind.FUNCTION, parent=scope, comprehension=True)
    tasks: list[PyTask] = []
    first = True
    for child in node.named_children:
        if child.type != "for_in_clause":
            tasks += _py_load(inner, [child])
            continue
        left, right = _field(child, "left"), _field(child, "right")
        if left is not None:
            tasks.append((left, inner, PyCtx.STORE))
        tasks += _py_load(scope if first else inner, [right])
        first = False
    return tasks


def _py_assignment(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    left = _field(node, "left")
    targets = [] if left is None else [(left, scope, PyCtx.STORE)]
    return [*targets, *_py_load(scope, [_field(node, "type"), _field(node, "right")])]


def _py_augmented(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    """`x += 1` reads x and makes it local, but defines nothing new: it needs x's definition."""
    left = _field(node, "left")
    if left is not None and left.type == "identifier":
        scope.bound.add(_text(left))
    return _py_load(scope, [left, _field(node, "right")])


def _py_for(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    left = _field(node, "left")
    rest = _py_other_children(node, "left")
    return [*([] if left is None else [(left, scope, PyCtx.STORE)]), *_py_load(scope, rest)]


def _py_as(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    """`with open(p) as f`, `except E as e`: the alias is bound."""
    alias = _field(node, "alias")
    rest = _py_other_children(node, "alias")
    return [*([] if alias is None else [(alias, scope, PyCtx.STORE)]), *_py_load(scope, rest)]


def _py_other_children(node: Node, excluded: str) -> list[Node]:
    """The named children outside field `excluded` (nodes are compared by field, because the
    binding hands out a new wrapper object at every access)."""
    return [c for f, c in fields(node) if c.is_named and f != excluded]


def _py_walrus(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    target = scope
    while target.comprehension and target.parent is not None:
        target = target.parent
    name = _field(node, "name")
    return [
        *([] if name is None else [(name, target, PyCtx.STORE)]),
        *_py_load(scope, [_field(node, "value")]),
    ]


def _py_declaration(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    """`global X` reads the module's X (and makes X = ... define it); `nonlocal` reads a local."""
    for name in (c for c in node.named_children if c.type == "identifier"):
        if node.type == "global_statement":
            scope.declared_global.add(_text(name))
            found.add(PyOcc.REFER, first_row(name), scope, _text(name))
        else:
            scope.declared_nonlocal.add(_text(name))
    return ()


def _py_delete(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    """`del x` makes x local to a function (and defines nothing); `del a.b` reads a."""
    targets = [
        t
        for c in node.named_children
        for t in (c.named_children if c.type == "expression_list" else [c])
    ]
    for target in targets:
        if target.type == "identifier":
            scope.bound.add(_text(target))
    return _py_load(scope, [t for t in targets if t.type != "identifier"])


def _py_import(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    """`import a.b` binds a; `from m import a` binds a; `... as c` binds c. Every name in the
    statement is also used: it refers to a module or a module-level name elsewhere."""
    from_import = node.type == "import_from_statement"
    for leaf in leaves(_field(node, "module_name"), PY_IDENTS, frozenset()):
        found.add(PyOcc.IMPORTED, first_row(leaf), scope, _text(leaf))
    for name in node.children_by_field_name("name"):
        alias = _field(name, "alias")
        dotted = _field(name, "name") if alias is not None else name
        parts = [] if dotted is None else list(dotted.named_children)
        for part in parts:
            found.add(PyOcc.IMPORTED, first_row(part), scope, _text(part))
        bound = alias or _py_import_bound(parts, from_import)
        if bound is not None:
            found.add(PyOcc.BIND, first_row(bound), scope, _text(bound))
            scope.imports[_text(bound)] = from_import
    return ()


def _py_import_bound(parts: Sequence[Node], from_import: bool) -> Node | None:
    """`import a.b` binds a, `from m import a` binds a."""
    if not parts:
        return None
    return parts[-1] if from_import else parts[0]


def _py_case(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    patterns = [c for c in node.named_children if c.type == "case_pattern"]
    return [
        *_py_patterns(scope, patterns),
        *_py_load(scope, [c for c in node.named_children if c.type != "case_pattern"]),
    ]


def _py_type_alias(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    """`type Alias[T] = ...` binds Alias."""
    name = next(leaves(_field(node, "left"), PY_IDENTS, frozenset()), None)
    if name is not None:
        found.add(PyOcc.BIND, first_row(name), scope, _text(name))
    return _py_load(scope, [_field(node, "right")])


def _py_keyword_argument(found: PyFound, node: Node, scope: PyScope) -> Iterable[PyTask]:
    """`f(timeout=5)`: timeout names the callee's parameter, no name in scope."""
    return _py_load(scope, [_field(node, "value")])


_PY_VISITORS: dict[str, PyVisit] = {
    "function_definition": _py_function,
    "class_definition": _py_class,
    "lambda": _py_lambda,
    **dict.fromkeys(
        (
            "list_comprehension",
            "set_comprehension",
            "dictionary_comprehension",
            "generator_expression",
        ),
        _py_comprehension,
    ),
    "attribute": _py_attribute,
    "keyword_argument": _py_keyword_argument,
    "assignment": _py_assignment,
    "augmented_assignment": _py_augmented,
    "for_statement": _py_for,
    "as_pattern": _py_as,
    "named_expression": _py_walrus,
    "global_statement": _py_declaration,
    "nonlocal_statement": _py_declaration,
    "delete_statement": _py_delete,
    "import_statement": _py_import,
    "import_from_statement": _py_import,
    # A compiler directive: it binds no name any other code looks for.
    "future_import_statement": lambda found, node, scope: (),
    "case_clause": _py_case,
    "type_alias_statement": _py_type_alias,
}
