"""syntax: scopes, enclosing, split_points and names, over real grammars and over the fallback.

Each language gets one small realistic file. The same definition/use checks run twice: with the
tree-sitter grammar, and with DDCHANGE_NO_SYNTAX=1 (the regex scan), where the scan is meant to
agree. Grammar-mode tests skip when the language's wheel is missing (`pip install -e
'.[syntax]'`); the fallback tests never skip.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddchange.hierarchy.syntax import (
    NO_SYNTAX_ENV,
    Names,
    Scope,
    enclosing,
    has_grammar,
    language_of,
    names,
    scopes,
    split_points,
)


@dataclass(frozen=True)
class Sample:
    """A source file and what the syntax helper must find in it (lines are 1-based)."""

    path: str
    source: str
    scopes: list[tuple[str, str, int, int]]  # (kind, name, start, end), in scopes() order
    innermost: tuple[int, str]  # a line, and the name of the innermost scope around it
    split: tuple[int, int, list[int]]  # a range spanning two definitions, and its cut lines
    defines: list[tuple[int, str]]  # a line, and a name its definition there defines
    uses: list[tuple[int, str]]  # a line, and a name it uses
    not_used: list[tuple[int, str]] = field(default_factory=list)  # ... and one it does not use

    @property
    def content(self) -> bytes:
        return self.source.encode()


PYTHON = Sample(
    "pkg/parser.py",
    """\
import os
from m import a as b


class Parser:
    \"\"\"Parses things.\"\"\"

    def __init__(self, text):
        self.text = text

    @staticmethod
    def parse(text):
        tokens = tokenize(text)
        return [b(t) for t in tokens]


def tokenize(text):
    return text.split(os.sep)
""",
    scopes=[
        ("class", "Parser", 5, 14),
        ("method", "Parser.__init__", 8, 9),
        ("method", "Parser.parse", 11, 14),  # the decorator belongs to the method
        ("function", "tokenize", 17, 18),
    ],
    innermost=(13, "Parser.parse"),
    split=(14, 17, [15, 17]),  # end of Parser | blank lines | tokenize
    # A method and an attribute set through self are members of their class.
    defines=[
        (1, "os"),
        (2, "b"),
        (5, "Parser"),
        (12, "Parser.parse"),
        (17, "tokenize"),
        (9, "Parser.text"),
    ],
    uses=[(13, "tokenize"), (14, "b"), (2, "a"), (18, "os")],
    # definition, parameter, local, builtin
    not_used=[(17, "tokenize"), (12, "text"), (13, "tokens"), (11, "staticmethod")],
)

C = Sample(
    "src/area.c",
    """\
#include <stdio.h>
#define MAX 10

struct point {
    int x;
    int y;
};

static int area(struct point *p)
{
    return p->x * p->y;
}

int main(void)
{
    struct point p = {MAX, 2};
    printf("%d\\n", area(&p));
    return 0;
}
""",
    scopes=[
        ("macro", "MAX", 2, 2),
        ("struct", "point", 4, 7),
        ("function", "area", 9, 12),
        ("function", "main", 14, 19),
    ],
    innermost=(11, "area"),
    split=(11, 15, [13, 14]),
    defines=[(2, "MAX"), (4, "point"), (5, "x"), (9, "area"), (14, "main")],
    uses=[(16, "MAX"), (16, "point"), (17, "area"), (17, "printf"), (11, "x"), (9, "point")],
    not_used=[(9, "area"), (9, "p"), (16, "p"), (1, "stdio")],
)

CPP = Sample(
    "src/widget.cpp",
    """\
#include <string>

namespace ns {

class Widget {
public:
    void draw(int x) const {
        render(x);
    }
    int size() const { return 3; }
};

void Widget::resize(int w) {
    draw(w);
}

}  // namespace ns
""",
    scopes=[
        ("namespace", "ns", 3, 17),
        ("class", "ns::Widget", 5, 11),
        ("method", "ns::Widget::draw", 7, 9),
        ("method", "ns::Widget::size", 10, 10),
        ("method", "ns::Widget::resize", 13, 15),
    ],
    innermost=(8, "ns::Widget::draw"),
    split=(9, 10, [10]),
    defines=[(5, "Widget"), (7, "draw"), (13, "resize")],
    uses=[(8, "render"), (14, "draw"), (13, "Widget")],
    not_used=[(7, "x"), (13, "w")],
)

JAVASCRIPT = Sample(
    "web/store.js",
    """\
import { readFile as read } from "fs";

export class Store {
  constructor(path) {
    this.path = path;
  }

  load() {
    return parse(read(this.path));
  }
}

export function parse(text) {
  return JSON.parse(text);
}

const helper = (x) => x * 2;
""",
    scopes=[
        ("class", "Store", 3, 11),
        ("method", "Store.constructor", 4, 6),
        ("method", "Store.load", 8, 10),
        ("function", "parse", 13, 15),
        ("function", "helper", 17, 17),
    ],
    innermost=(9, "Store.load"),
    split=(10, 13, [12, 13]),  # end of Store (and of load in it) | blank | parse
    defines=[(1, "read"), (3, "Store"), (8, "load"), (13, "parse"), (17, "helper")],
    uses=[(9, "parse"), (9, "read"), (1, "readFile"), (14, "JSON")],
    not_used=[(13, "text"), (13, "parse")],
)

TYPESCRIPT = Sample(
    "web/shapes.ts",
    """\
interface Shape {
  area(): number;
}

export class Circle implements Shape {
  constructor(private radius: number) {}

  area(): number {
    return square(this.radius) * Math.PI;
  }
}

function square(x: number): number {
  return x * x;
}
""",
    scopes=[
        ("interface", "Shape", 1, 3),
        ("class", "Circle", 5, 11),
        ("method", "Circle.constructor", 6, 6),
        ("method", "Circle.area", 8, 10),
        ("function", "square", 13, 15),
    ],
    innermost=(9, "Circle.area"),
    split=(9, 14, [12, 13]),
    defines=[(1, "Shape"), (5, "Circle"), (8, "area"), (13, "square")],
    uses=[(9, "square"), (9, "radius"), (5, "Shape")],
    not_used=[(13, "x"), (13, "number")],
)

TSX = Sample(
    "web/App.tsx",
    """\
export function App({ title }: Props) {
  return <h1>{format(title)}</h1>;
}

function format(s: string) {
  return s.trim();
}
""",
    scopes=[("function", "App", 1, 3), ("function", "format", 5, 7)],
    innermost=(2, "App"),
    split=(2, 5, [4, 5]),
    defines=[(1, "App"), (5, "format")],
    uses=[(2, "format"), (1, "Props")],
    not_used=[(5, "s")],
)

GO = Sample(
    "shapes/circle.go",
    """\
package shapes

import "math"

type Circle struct {
	Radius float64
}

func (c *Circle) Area() float64 {
	return math.Pi * square(c.Radius)
}

func square(x float64) float64 {
	return x * x
}
""",
    scopes=[
        ("struct", "Circle", 5, 7),
        ("method", "Circle.Area", 9, 11),
        ("function", "square", 13, 15),
    ],
    innermost=(10, "Circle.Area"),
    split=(10, 14, [12, 13]),
    defines=[(3, "math"), (5, "Circle"), (6, "Radius"), (9, "Area"), (13, "square")],
    uses=[(10, "square"), (10, "math"), (10, "Radius"), (9, "Circle")],
    not_used=[(9, "c"), (13, "x"), (1, "shapes"), (13, "float64")],
)

RUST = Sample(
    "src/circle.rs",
    """\
use std::fmt::Display;

#[derive(Debug)]
pub struct Circle {
    radius: f64,
}

impl Circle {
    pub fn area(&self) -> f64 {
        square(self.radius) * std::f64::consts::PI
    }
}

fn square(x: f64) -> f64 {
    x * x
}
""",
    scopes=[
        ("struct", "Circle", 3, 6),  # its attribute belongs to it
        ("impl", "Circle", 8, 12),
        ("method", "Circle::area", 9, 11),
        ("function", "square", 14, 16),
    ],
    innermost=(10, "Circle::area"),
    split=(11, 14, [13, 14]),
    defines=[(1, "Display"), (4, "Circle"), (5, "radius"), (9, "area"), (14, "square")],
    uses=[(10, "square"), (10, "radius"), (8, "Circle")],
    not_used=[(14, "x"), (14, "f64")],
)

JAVA = Sample(
    "src/Circle.java",
    """\
package shapes;

import java.util.List;

public class Circle {
    private final double radius;

    public Circle(double radius) {
        this.radius = radius;
    }

    public double area() {
        return square(radius) * Math.PI;
    }

    private static double square(double x) {
        return x * x;
    }
}
""",
    scopes=[
        ("class", "Circle", 5, 19),
        ("method", "Circle.Circle", 8, 10),
        ("method", "Circle.area", 12, 14),
        ("method", "Circle.square", 16, 18),
    ],
    innermost=(13, "Circle.area"),
    split=(13, 17, [15, 16]),
    defines=[(3, "List"), (5, "Circle"), (6, "radius"), (12, "area"), (16, "square")],
    uses=[(13, "square"), (13, "Math"), (13, "radius")],
    not_used=[(16, "x"), (1, "shapes"), (16, "double")],
)

SAMPLES = [PYTHON, C, CPP, JAVASCRIPT, TYPESCRIPT, TSX, GO, RUST, JAVA]
IDS = [language_of(s.path) or s.path for s in SAMPLES]


@pytest.fixture(params=["grammar", "fallback"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test once with tree-sitter and once with DDCHANGE_NO_SYNTAX=1."""
    if request.param == "fallback":
        monkeypatch.setenv(NO_SYNTAX_ENV, "1")
    else:
        monkeypatch.delenv(NO_SYNTAX_ENV, raising=False)
    return str(request.param)


@pytest.fixture
def grammar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NO_SYNTAX_ENV, raising=False)


def require_grammar(path: str) -> None:
    if not has_grammar(path):
        pytest.skip(f"no tree-sitter grammar for {path}: pip install -e '.[syntax]'")


def found_scopes(sample: Sample) -> tuple[Scope, ...]:
    require_grammar(sample.path)
    found = scopes(sample.path, sample.content)
    assert found is not None
    return found


# --- scopes, enclosing, split_points with grammars ---------------------------------------------


@pytest.mark.usefixtures("grammar")
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_scopes_finds_qualified_definitions_with_their_lines(sample: Sample) -> None:
    found = found_scopes(sample)
    assert [(s.kind, s.name, s.start, s.end) for s in found] == sample.scopes


@pytest.mark.usefixtures("grammar")
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_enclosing_picks_the_innermost_scope(sample: Sample) -> None:
    found = found_scopes(sample)
    line, name = sample.innermost
    inner = enclosing(found, line, line)
    assert inner is not None
    assert inner.name == name
    # The whole file (each sample has top-level code or two top-level definitions) is in none.
    assert enclosing(found, 1, len(sample.source.splitlines())) is None
    parent = enclosing(found, inner.start - 1, inner.end)
    assert parent is None or (parent.start < inner.start and inner.end <= parent.end)


@pytest.mark.usefixtures("grammar")
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_split_points_cut_a_range_at_definition_boundaries(sample: Sample) -> None:
    first, last, cuts = sample.split
    assert split_points(found_scopes(sample), first, last) == cuts


def pieces(first: int, last: int, cuts: list[int]) -> Iterator[tuple[int, int]]:
    starts = [first, *cuts]
    ends = [c - 1 for c in cuts] + [last]
    return zip(starts, ends, strict=True)


def inside(inner: Scope, outer: Scope | None) -> bool:
    if outer is None:
        return True
    return outer.start <= inner.start and inner.end <= outer.end and inner != outer


@pytest.mark.usefixtures("grammar")
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_split_points_invariant_on_every_range(sample: Sample) -> None:
    """split_points' contract, on every range of every sample: with E the scope enclosing the
    range and the children the outermost scopes inside E that overlap it, each piece lies in
    one child or in none, and neighbouring pieces differ (no cut is superfluous)."""
    found = found_scopes(sample)
    count = len(sample.source.splitlines())
    for first, last in itertools.combinations_with_replacement(range(1, count + 1), 2):
        cuts = split_points(found, first, last)
        assert all(first < c <= last for c in cuts)
        assert cuts == sorted(set(cuts))
        outer = enclosing(found, first, last)
        overlapping = [s for s in found if s.start <= last and first <= s.end and inside(s, outer)]
        children = [s for s in overlapping if not any(inside(s, o) for o in overlapping)]
        owners = []
        for start, end in pieces(first, last, cuts):
            touched = [s for s in children if s.start <= end and start <= s.end]
            assert len(touched) <= 1, (first, last, cuts)
            assert all(s.start <= start and end <= s.end for s in touched), (first, last, cuts)
            owners.append(touched[0] if touched else None)
        assert all(a != b for a, b in itertools.pairwise(owners)), (first, last, cuts)


def test_enclosing_and_split_points_on_hand_made_scopes() -> None:
    outer = Scope(kind="class", name="A", start=1, end=10)
    inner = Scope(kind="method", name="A.f", start=3, end=5)
    other = Scope(kind="function", name="g", start=12, end=14)
    found = [outer, inner, other]
    assert enclosing(found, 4, 4) == inner
    assert enclosing(found, 2, 6) == outer
    assert enclosing(found, 9, 12) is None
    assert enclosing(found, 11, 10) is None  # an empty range stands for its first line
    assert enclosing(found, 13, 12) == other
    assert split_points(found, 4, 13) == [11, 12]  # A (f in it) | gap | g: coarsest level only
    assert split_points(found, 2, 6) == [3, 6]
    assert split_points(found, 4, 5) == []
    assert split_points(found, 5, 5) == []
    assert split_points([], 1, 100) == []


# --- names in both modes ------------------------------------------------------------------------


def names_on(sample: Sample, mode: str, line: int) -> Names:
    if mode == "grammar":
        require_grammar(sample.path)
    return names(sample.path, sample.content, [line])


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_a_definition_line_defines_the_name(sample: Sample, mode: str) -> None:
    for line, name in sample.defines:
        assert name in names_on(sample, mode, line).defined, (line, name)


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_a_call_line_uses_the_name(sample: Sample, mode: str) -> None:
    for line, name in sample.uses:
        found = names_on(sample, mode, line)
        assert name in found.used, (line, name)
        assert name not in found.defined, (line, name)


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_definitions_parameters_locals_and_builtins_are_not_uses(sample: Sample, mode: str) -> None:
    for line, name in sample.not_used:
        assert name not in names_on(sample, mode, line).used, (line, name)


def test_python_imports(mode: str) -> None:
    source = b"from m import a as b\nimport os.path as osp, sys\nfrom .pkg import (c, d as e)\n"
    alias = names("x.py", source, [1])
    assert alias.defined == {"b"}
    assert {"m", "a"} <= alias.used
    assert "b" not in alias.used
    modules = names("x.py", source, [2])
    assert modules.defined == {"osp", "sys"}
    assert {"os", "path"} <= modules.used
    assert names("x.py", source, [3]).defined == {"c", "e"}


def test_c_define_defines_the_macro_and_include_defines_nothing(mode: str) -> None:
    source = (
        b'#include <stdlib.h>\n#include "local.h"\n#define MAX 10\n#define SQ(v) ((v) * SCALE)\n'
    )
    assert names("a.c", source, [1, 2]) == Names(frozenset(), frozenset())
    assert names("a.c", source, [3]).defined == {"MAX"}
    macro = names("a.c", source, [4])
    assert macro.defined == {"SQ"}
    assert macro.used == {"SCALE"}  # the parameter v is bound, not used


@pytest.mark.parametrize(
    ("path", "source", "line", "defined", "used"),
    [
        # A keyword argument on a continuation line is no module-level assignment (nor a use:
        # see test_python_keyword_arguments_name_no_variable).
        ("a.py", "result = run(\n    timeout=5,\n)\n", 2, set(), set()),
        (
            "a.py",
            "class A:\n    LIMIT = 3\n    def f(self):\n        n = 1\n",
            2,
            {"A.LIMIT"},
            set(),
        ),
        ("a.py", "class A:\n    LIMIT = 3\n    def f(self):\n        n = 1\n", 4, set(), set()),
        # A parameter list over several lines: the body's declarations are locals, not fields.
        (
            "a.c",
            "int f(int a,\n      struct point *p)\n{\n    int local = a;\n}\n",
            4,
            set(),
            {"a"},
        ),
        ("a.c", "struct s {\n    int count;\n};\n", 2, {"count"}, set()),
        ("a.c", "typedef struct {\n    int a;\n} pair_t;\n", 3, {"pair_t"}, set()),
        # Destructuring binds a and c; b is the key it reads.
        ("a.js", 'const { a, b: c } = require("m");\n', 1, {"a", "c"}, {"b", "require"}),
        ("a.go", 'import (\n\t"fmt"\n\tstr "strings"\n)\n', 2, {"fmt"}, set()),
        ("a.go", 'import (\n\t"fmt"\n\tstr "strings"\n)\n', 3, {"str"}, set()),
        (
            "a.rs",
            "use std::collections::{HashMap, HashSet as Set};\n",
            1,
            {"HashMap", "Set"},
            {"HashSet"},
        ),
    ],
)
def test_context_decides_what_a_line_defines(
    path: str, source: str, line: int, defined: set[str], used: set[str], mode: str
) -> None:
    if mode == "grammar":
        require_grammar(path)
    found = names(path, source.encode(), [line])
    assert found.defined == defined
    assert used <= found.used


# --- Python: names resolved by scope -------------------------------------------------------------
# A project-wide match of unscoped names drags unrelated changes together (every `def parse` with
# every `obj.parse`, every parameter `name` with every other), so Python names are resolved the
# way the interpreter does. Each line below is pinned to exactly what it defines and uses, in both
# modes.

SCOPED = """\
import os.path
from models import User, helpers as h
from __future__ import annotations

LIMIT: int = 3
counter = 0
for entry in os.listdir():
    pass


class Base:
    def parse(self):
        return 1


class Parser(Base):
    TOKEN = LIMIT
    DOUBLE = TOKEN * 2

    class Inner:
        depth = 1

    def __init__(self, text, field=None):
        self.text = text

    @staticmethod
    def tokenize(text):
        return [t for t in text.split() if t]

    @classmethod
    @cached(size=LIMIT)
    def build(cls, source: Source = DEFAULT) -> Parser:
        return cls.tokenize(source)

    def run(self, node):
        result = self.parse()
        node.parse()
        other.parse()
        Parser.Inner.depth
        User.create(name=result)
        h.clean(os.path.join(name))
        global counter
        counter = counter + len(node)
        with open(node) as handle, lock:
            for item in handle:
                total = item
        try:
            pass
        except ValueError as error:
            report(error, total)

        def inner():
            return self.text, result

        return inner


def format(value):
    return value


def configure(
    path,
    mode: Mode = DEFAULT_MODE,
):
    print(format(path), later)
    later = 1
"""

D = frozenset[str]
NOTHING: D = frozenset()


def pinned(*items: str) -> D:
    return frozenset(items)


def line_of(source: str, snippet: str) -> int:
    """The 1-based number of the first line that contains `snippet`."""
    return next(n for n, line in enumerate(source.splitlines(), 1) if snippet in line)


# (snippet of the line, what it defines, what it uses)
PY_DEFINITIONS = [
    # Module level: every binding defines its plain name; an import uses what it imports.
    ("import os.path", pinned("os"), pinned("os", "path")),
    ("from models import", pinned("User", "h"), pinned("models", "User", "helpers")),
    ("from __future__", NOTHING, NOTHING),  # a compiler directive
    ("LIMIT: int = 3", pinned("LIMIT"), NOTHING),
    ("counter = 0", pinned("counter"), NOTHING),
    ("for entry in", pinned("entry"), pinned("os", "listdir")),
    ("class Base:", pinned("Base"), NOTHING),
    ("def format(value)", pinned("format"), NOTHING),
    # A class's members are qualified by it, nested classes by all of them.
    ("def parse(self)", pinned("Base.parse"), NOTHING),
    ("class Parser(Base)", pinned("Parser"), pinned("Base")),
    ("TOKEN = LIMIT", pinned("Parser.TOKEN"), pinned("LIMIT")),
    ("class Inner:", pinned("Parser.Inner"), NOTHING),
    ("depth = 1", pinned("Parser.Inner.depth"), NOTHING),
    ("def __init__(self, text, field=None)", pinned("Parser.__init__"), NOTHING),
    ("self.text = text", pinned("Parser.text"), NOTHING),
    ("def tokenize(text)", pinned("Parser.tokenize"), NOTHING),
    # In a function: parameters, locals, loop, with, except and comprehension targets define
    # nothing; a name declared global defines the module's.
    ("return [t for t in text.split() if t]", NOTHING, NOTHING),
    ("for item in handle:", NOTHING, NOTHING),
    ("total = item", NOTHING, NOTHING),
    ("except ValueError as error:", NOTHING, NOTHING),
    ("counter = counter + len(node)", pinned("counter"), pinned("counter")),
    ("    path,", NOTHING, NOTHING),
]

PY_USES = [
    # Bare names: locals (assigned anywhere in the function, even later) and builtins are no
    # uses; a module-level definition shadows a builtin (format); an unknown name is a use.
    ("print(format(path), later)", NOTHING, pinned("format")),
    ("report(error, total)", NOTHING, pinned("report")),
    ("@classmethod", NOTHING, NOTHING),
    ("global counter", NOTHING, pinned("counter")),
    # Decorators, base classes, annotations and default values are uses where they stand.
    ("@cached(size=LIMIT)", NOTHING, pinned("cached", "LIMIT")),
    ("def build(cls", pinned("Parser.build"), pinned("Source", "DEFAULT", "Parser")),
    ("mode: Mode = DEFAULT_MODE,", NOTHING, pinned("Mode", "DEFAULT_MODE")),
    # A class body sees its own names.
    ("DOUBLE = TOKEN * 2", pinned("Parser.DOUBLE"), pinned("Parser.TOKEN")),
    # self.m and cls.m: a member of the method's class, or of a base class.
    ("result = self.parse()", NOTHING, pinned("Parser.parse", "Base.parse")),
    ("return cls.tokenize(source)", NOTHING, pinned("Parser.tokenize", "Base.tokenize")),
    ("return self.text, result", NOTHING, pinned("Parser.text", "Base.text")),  # a closure
    # C.m: the class and its member.
    ("Parser.Inner.depth", NOTHING, pinned("Parser", "Parser.Inner", "Base.Inner")),
    # mod.f: a module-level name of another module (and a member, for `from m import C`).
    ("User.create(name=result)", NOTHING, pinned("User", "User.create", "create")),
    ("h.clean(os.path.join(name))", NOTHING, pinned("h", "clean", "h.clean", "os", "path", "name")),
    # x.attr of any other object names no attribute; x itself is a use unless local.
    ("node.parse()", NOTHING, NOTHING),
    ("other.parse()", NOTHING, pinned("other")),
    ("with open(node) as handle, lock:", NOTHING, pinned("lock")),
]


@pytest.mark.parametrize(
    ("snippet", "defined", "used"),
    PY_DEFINITIONS + PY_USES,
    ids=[s for s, _, _ in PY_DEFINITIONS + PY_USES],
)
def test_python_names_are_resolved_by_scope(snippet: str, defined: D, used: D, mode: str) -> None:
    if mode == "grammar":
        require_grammar("pkg/parser.py")
    found = names("pkg/parser.py", SCOPED.encode(), [line_of(SCOPED, snippet)])
    assert found == Names(defined, used)


@pytest.mark.parametrize(
    ("source", "snippet", "used"),
    [
        # A method does not see its class's names: X is the module's.
        ("X = 1\nclass A:\n    X = 2\n    def f(self):\n        return X\n", "return X", {"X"}),
        # nonlocal: the enclosing function's local; global: the module's.
        (
            "def f():\n    n = 1\n    def g():\n        nonlocal n\n        n = n + 1\n",
            "n = n + 1",
            set(),
        ),
        ("def f():\n    global n\n    n += 1\n", "n += 1", {"n"}),
        # `x += 1` makes x local: no use of a module-level x.
        ("x = 0\ndef f():\n    x += 1\n", "x += 1", set()),
        # A method of a class inside a function is no member anyone else can name.
        ("def f():\n    class A:\n        def g(self):\n            self.h()\n", "self.h()", set()),
        # A static method has no self: its first parameter is an ordinary local.
        (
            "class A:\n    @staticmethod\n    def g(self):\n        self.h()\n",
            "self.h()",
            set(),
        ),
        # Every module has its own __all__: no module uses another's.
        ("__all__ = [name]\n__all__ += extra\n", "+=", {"extra"}),
        # A lambda's parameters are local to it, its defaults are read outside.
        ("key = lambda item, n=LIMIT: item[n]\n", "lambda", {"LIMIT"}),
    ],
)
def test_python_scope_rules(source: str, snippet: str, used: set[str], mode: str) -> None:
    if mode == "grammar":
        require_grammar("a.py")
    assert names("a.py", source.encode(), [line_of(source, snippet)]).used == used


def test_python_keyword_arguments_name_no_variable(mode: str) -> None:
    """`run(timeout=5)`: timeout names the callee's parameter, which defines nothing either."""
    if mode == "grammar":
        require_grammar("a.py")
    source = b"result = run(\n    timeout=5,\n    retries=RETRIES,\n)\n"
    assert names("a.py", source, [2, 3]) == Names(frozenset(), frozenset({"RETRIES"}))


def test_python_modes_agree_on_every_line() -> None:
    """The tree and the scan resolve the same way: every line of the scoped sample gives the
    same answer in both modes (the scan only misses names inside f-strings, absent here)."""
    require_grammar("a.py")
    content = SCOPED.encode()
    count = len(SCOPED.splitlines())
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(NO_SYNTAX_ENV, raising=False)
        tree = [names("a.py", content, [n]) for n in range(1, count + 1)]
        patch.setenv(NO_SYNTAX_ENV, "1")
        scan = [names("a.py", content, [n]) for n in range(1, count + 1)]
    assert tree == scan


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("calc.py", "def total(xs):\n    return 0\n\nprint(total([]))\n", "sum_all"),
        ("calc.c", "int total(int n) {\n    return n;\n}\nint x = total(1);\n", "sum_all"),
        ("calc.go", "func total(n int) int {\n\treturn n\n}\nvar x = total(1)\n", "sum_all"),
        ("calc.js", "function total(n) {\n  return n;\n}\nconst x = total(1);\n", "sum_all"),
    ],
)
def test_a_renamed_function_call_site_uses_the_new_name(
    path: str, old: str, new: str, mode: str
) -> None:
    renamed = old.replace("total", new).encode()
    if mode == "grammar":
        require_grammar(path)
    definition = names(path, renamed, [1])
    call = names(path, renamed, [4])
    assert new in definition.defined
    assert new in call.used
    assert "total" not in call.used | definition.defined


def test_names_over_several_lines_and_out_of_range(mode: str) -> None:
    if mode == "grammar":
        require_grammar(PYTHON.path)
    source = PYTHON.content
    together = names(PYTHON.path, source, [12, 13, 17])
    assert {"Parser.parse", "tokenize"} <= together.defined
    # tokenize is used on line 13 and defined on 17: both, since it is referenced separately.
    assert "tokenize" in together.used
    assert names(PYTHON.path, source, []) == Names(frozenset(), frozenset())
    assert names(PYTHON.path, source, [0, 500]) == Names(frozenset(), frozenset())


# --- switching off and unknown languages ------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("x.h", "c"),
        ("x.c", "c"),
        ("x.hpp", "cpp"),
        ("x.cc", "cpp"),
        ("x.cpp", "cpp"),
        ("x.cxx", "cpp"),
        ("x.hh", "cpp"),
        ("x.js", "javascript"),
        ("x.mjs", "javascript"),
        ("x.cjs", "javascript"),
        ("x.jsx", "javascript"),
        ("x.ts", "typescript"),
        ("x.d.ts", "typescript"),
        ("x.tsx", "tsx"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("A.java", "java"),
        ("Makefile", None),
        ("notes.txt", None),
        ("dir.py/README", None),
    ],
)
def test_language_of(path: str, language: str | None) -> None:
    assert language_of(path) == language


def test_scopes_is_none_in_fallback_mode_and_for_unknown_languages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(NO_SYNTAX_ENV, raising=False)
    assert scopes("notes.txt", b"def f():\n    pass\n") is None
    assert not has_grammar("notes.txt")
    monkeypatch.setenv(NO_SYNTAX_ENV, "1")
    for sample in SAMPLES:
        assert not has_grammar(sample.path)
        assert scopes(sample.path, sample.content) is None


def test_the_switch_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NO_SYNTAX_ENV, raising=False)
    require_grammar(PYTHON.path)
    assert scopes(PYTHON.path, PYTHON.content) is not None
    monkeypatch.setenv(NO_SYNTAX_ENV, "1")
    assert scopes(PYTHON.path, PYTHON.content) is None
    monkeypatch.setenv(NO_SYNTAX_ENV, "0")  # 0 means "not disabled"
    assert scopes(PYTHON.path, PYTHON.content) is not None


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        "docs/api.rst",
        "notes.txt",
        "setup.cfg",
        "pyproject.toml",
        "tox.ini",
        "package.json",
        "ci.yaml",
        "Makefile",
        "init.lua",
        "pkg/parser.pyi",  # a stub restates its module's definitions: they are the module's
    ],
)
def test_docs_configuration_stubs_and_unknown_languages_name_nothing(path: str, mode: str) -> None:
    """Prose and settings mention names (`parse`, `def f():` in an example) without defining or
    using them; only code of a language ddchange knows does."""
    content = b"def parse(text: Token) -> Tree:\n    return tokenize(text)\nname = value\n"
    assert names(path, content, [1, 2, 3]) == Names(frozenset(), frozenset())


# --- broken code ------------------------------------------------------------------------------


def broken_variants(sample: Sample) -> list[bytes]:
    text = sample.source
    half = text[: len(text) // 2]
    return [
        half.encode(),  # half a file: a function cut off in the middle
        (text + "}\n}\n)\n").encode(),  # unbalanced closers
        text.replace("}", "").replace(":\n", "\n").encode(),  # no closing braces, no colons
        b"\xff\xfe" + text.encode()[:40] + b"\x80\x00 {{{ ((",  # not UTF-8 at all
        b"",
    ]


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_broken_code_never_raises(sample: Sample, mode: str) -> None:
    for content in broken_variants(sample):
        found = scopes(sample.path, content)
        assert found is None or all(s.start <= s.end for s in found)
        everything = range(1, content.count(b"\n") + 2)
        result = names(sample.path, content, everything)
        assert isinstance(result, Names)
        if found:
            split_points(found, 1, len(everything))


CODE_LIKE = st.text(alphabet="{}()[]<>;:=,.#\"'`/*\\\n\t abcdefgh_", max_size=200)


@settings(max_examples=80)
@given(
    path=st.sampled_from([s.path for s in SAMPLES] + ["x.txt"]),
    content=st.binary(max_size=200) | CODE_LIKE.map(str.encode),
    disabled=st.booleans(),
)
def test_arbitrary_bytes_never_raise(path: str, content: bytes, disabled: bool) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(NO_SYNTAX_ENV, "1" if disabled else "0")
        found = scopes(path, content)
        lines = content.count(b"\n") + 1
        assert isinstance(names(path, content, range(1, lines + 1)), Names)
    if found:
        assert all(1 <= s.start <= s.end for s in found)
        split_points(found, 1, lines)
