"""A GDB-like C project and one large GOOD→BAD change over it, generated from a seed.

Owns the generator behind benchmarks/gdb_like.py. The program has `modules` C files (`src/<dir>/
<module>.c`, each with `include/<module>.h`), a `main.c`, a Makefile that builds `app`, and a
`test.sh` that compares `app`'s checksum with GOOD's. The change GOOD→BAD has exactly `hunks`
hunks, of the kinds that make most subsets of a real refactoring fail to build:

    rename       an exported function renamed: definition, declaration, every call site
    signature    an exported function gets an unused `unsigned scale` parameter; callers pass 1u
    helper       a new exported helper (declared in its module's header) replaces the inline
                 `acc * m + c` in other modules, which may need a new `#include` for it
    move         a function's definition moves to another module's file (delete + add)
    static       a file-local (static) function renamed with its call sites in the same file
    local        a function's local variable renamed with its uses in the same function
    define       a new file-local `#define` replaces a repeated constant in that file
    harmless     a comment, a reformatted expression, a constant written differently
    culprit      exactly one: `acc += C` becomes `acc += C + 1` in one function

Every change but the culprit keeps the program's behaviour, so any subset that builds passes
unless it holds the culprit.

Key idea: the program is a model first (functions made of operations, one line each), and GOOD
and BAD are two renderings of that model, as chunks of lines that are either the same on both
sides or a *site* that differs. Rendering puts at least SPACING unchanged lines between two
sites (comment lines where the code has too few), so git's diff (3 lines of context) turns every
site into exactly one hunk and the hunk count is what the plan says. The model also evaluates the
program in Python (32-bit unsigned arithmetic, as C's `unsigned` on the machines we run on), so
`test.sh` knows GOOD's checksum without a compiler, and the generator checks that the culprit
changes it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ddchange import samples

MASK = 0xFFFFFFFF
# Unchanged lines between two sites. git's hunks have 3 lines of context and merge when their
# contexts touch (6 lines apart or fewer); one more line of margin keeps them apart even when
# git slides an inserted block by a line along identical neighbours.
SPACING = 8
AUTHOR = "Bench Mark <bench@example.org>"

DIRS = ("gdb", "bfd", "opcodes", "libiberty", "readline", "sim", "gdbserver", "gnulib")
STEMS = ("symtab", "infrun", "valops", "frame", "target", "breakpoint", "parse", "dwarf", "elf")
LEAF_WORDS = ("scan", "hash", "fold", "mix", "pack", "lookup", "merge", "probe", "count", "walk")
RENAMED_WORDS = ("digest", "blend", "stir", "weave", "squash", "gather", "sift", "churn", "tally")
DRIVER_WORDS = ("update", "refresh", "resolve", "step", "sync")
VAR_WORDS = ("step", "bias", "seed", "span", "gain", "skew")
RENAMED_VARS = ("stride", "offset", "salt", "width", "boost", "tilt")
HELPER_WORDS = ("affine", "ramp", "lerp", "scale", "shift")
DEFINE_WORDS = ("STRIDE", "PRIME", "SALT", "WEIGHT", "LIMIT", "ROUNDS")
NOTES = ("hot path", "see ChangeLog", "keep in sync", "checked", "was a macro", "per review")

# How the structured kinds share the change, as fractions of all hunks; harmless edits fill
# the rest up to the exact count, and the culprit is one more.
SHARES = {
    "rename": 0.16,
    "signature": 0.10,
    "helper": 0.10,
    "move": 0.04,
    "static": 0.10,
    "local": 0.10,
    "define": 0.06,
}
PLAIN = ("add", "mul", "xsh", "addb")  # operations a harmless edit or the culprit may touch
EDITS = {
    "add": ("comment", "decimal", "local"),
    "mul": ("comment", "decimal"),
    "xsh": ("comment", "paren"),
    "addb": ("comment", "paren"),
}


@dataclass(eq=False)
class Op:
    """One line of a function body. `edit` says how BAD writes it ("" = as GOOD)."""

    kind: str  # add, mul, xsh, addb, var, call, affine
    value: int = 0  # the constant, shift or multiplier
    extra: int = 0  # call: the constant argument; affine: the addend
    callee: Func | None = None
    edit: str = ""  # comment, decimal, local, paren, define, culprit
    macro: str = ""  # edit == "define": the constant's new name
    helper: Func | None = None  # affine replaced by a call to this helper


@dataclass(eq=False)
class Func:
    """A function of the program; the fields after `ops` are the changes BAD makes to it."""

    kind: str  # leaf, static, driver, run, helper
    module: int
    name: str
    seed: int
    var: str
    var_value: int
    ops: list[Op]
    new_name: str = ""  # renamed in BAD
    new_var: str = ""  # its local variable renamed in BAD
    scale: bool = False  # BAD adds an unused `unsigned scale` parameter
    moved_to: int = -1  # the module whose file defines it in BAD; nothing else changes in it

    def name_in(self, bad: bool) -> str:
        return self.new_name if bad and self.new_name else self.name

    def var_in(self, bad: bool) -> str:
        return self.new_var if bad and self.new_var else self.var


@dataclass(eq=False)
class Module:
    index: int
    name: str
    path: str
    header: str
    funcs: list[Func]  # in file order: statics, leaves, drivers, run
    includes: list[int]  # modules whose headers GOOD includes, its own first
    new_includes: list[int] = field(default_factory=list)
    inserts: dict[int, list[Func | str]] = field(default_factory=dict)  # .c gap -> BAD's additions
    header_inserts: dict[int, Func] = field(default_factory=dict)  # header gap -> new helper

    def free_gap(self, rng: random.Random, before: int | None = None) -> int | None:
        """A random gap of the .c file without an insertion yet (at most `before`)."""
        last = len(self.funcs) if before is None else before
        free = [gap for gap in range(last + 1) if gap not in self.inserts]
        return rng.choice(free) if free else None

    @property
    def public(self) -> list[Func]:
        return [f for f in self.funcs if f.kind != "static"]


@dataclass(frozen=True)
class Culprit:
    """The ground truth: the one behavioural change, as the line BAD has in `path`."""

    path: str
    line: str  # without the "+" of the diff


@dataclass
class Project:
    modules: list[Module]
    helpers: list[Func]
    culprit: Culprit
    hunks: int  # sites in the plan: the hunks git's diff will show
    kinds: dict[str, int]  # hunks per kind of change
    good_output: int
    bad_output: int


# -- the program -------------------------------------------------------------------------------


def make_program(modules: int, rng: random.Random) -> list[Module]:
    """GOOD's program: every module's functions and operations, calls included."""
    per_dir = -(-modules // len(DIRS))
    mods = [_module(k, k // per_dir, rng) for k in range(modules)]
    leaves = [f for m in mods for f in m.funcs if f.kind == "leaf"]
    popularity = [rng.paretovariate(1.2) for _ in leaves]
    pairs = [(rng.randrange(3, 40, 2), rng.randrange(1, 1000)) for _ in range(max(8, modules // 3))]
    for module in mods:
        _fill_bodies(module, leaves, popularity, pairs, per_dir, rng)
        called = {op.callee.module for f in module.funcs for op in f.ops if op.callee}
        module.includes = [module.index, *sorted(called - {module.index})]
    return mods


def _module(k: int, directory: int, rng: random.Random) -> Module:
    name = f"{STEMS[k % len(STEMS)]}{k}"
    funcs = [_func("static", k, f"{rng.choice(LEAF_WORDS)}{j}", rng) for j in range(2)]
    funcs += [_func("leaf", k, f"{name}_{rng.choice(LEAF_WORDS)}{j}", rng) for j in range(4)]
    funcs += [_func("driver", k, f"{name}_{rng.choice(DRIVER_WORDS)}{j}", rng) for j in range(3)]
    funcs.append(_func("run", k, f"{name}_run", rng))
    path = f"src/{DIRS[directory % len(DIRS)]}/{name}.c"
    return Module(k, name, path, f"include/{name}.h", funcs, [])


def _func(kind: str, module: int, name: str, rng: random.Random) -> Func:
    var = f"v_{rng.choice(VAR_WORDS)}"
    return Func(kind, module, name, rng.getrandbits(32), var, rng.getrandbits(16), [])


def _fill_bodies(
    module: Module,
    leaves: list[Func],
    popularity: list[float],
    pairs: list[tuple[int, int]],
    per_dir: int,
    rng: random.Random,
) -> None:
    constants = [rng.getrandbits(24) for _ in range(6)]  # shared, so a #define has several uses
    statics = [f for f in module.funcs if f.kind == "static"]
    nearby = [i for i, f in enumerate(leaves) if f.module // per_dir == module.index // per_dir]
    for func in module.funcs:
        if func.kind in ("leaf", "static"):
            func.ops = [_plain(rng, constants, leaf=True) for _ in range(rng.randint(3, 6))]
        elif func.kind == "driver":
            func.ops = [
                _driver_op(rng, constants, leaves, popularity, nearby, statics, pairs)
                for _ in range(rng.randint(6, 10))
            ]
        else:
            drivers = [f for f in module.funcs if f.kind == "driver"]
            func.ops = [Op("call", callee=d) for d in drivers]


def _plain(rng: random.Random, constants: list[int], leaf: bool) -> Op:
    kind = rng.choices(("add", "mul", "xsh", "addb", "var"), (4, 2, 2, 2 if leaf else 0, 1.5))[0]
    if kind == "add":
        return Op("add", rng.choice(constants))
    if kind == "mul":
        return Op("mul", rng.getrandbits(31) * 2 + 1)  # odd: a bijection mod 2^32
    if kind == "xsh":
        return Op("xsh", rng.randint(3, 17))
    return Op(kind, rng.getrandbits(20))


def _driver_op(
    rng: random.Random,
    constants: list[int],
    leaves: list[Func],
    popularity: list[float],
    nearby: list[int],
    statics: list[Func],
    pairs: list[tuple[int, int]],
) -> Op:
    kind = rng.choices(("leaf", "static", "affine", "plain"), (4, 1.5, 1.5, 3))[0]
    if kind == "leaf":
        # Most calls stay in the caller's directory, as in real code; popular callees are
        # called from many files.
        pool = nearby if rng.random() < 0.7 else range(len(leaves))
        index = rng.choices(pool, [popularity[i] for i in pool])[0]
        return Op("call", extra=rng.getrandbits(12), callee=leaves[index])
    if kind == "static":
        return Op("call", extra=rng.getrandbits(12), callee=rng.choice(statics))
    if kind == "affine":
        m, c = rng.choice(pairs)
        return Op("affine", m, c)
    return _plain(rng, constants, leaf=False)


# -- the change --------------------------------------------------------------------------------


class _Planner:
    """Chooses BAD's changes on the model, counting the hunks each one adds.

    Each structured kind takes candidates in a random order while its share of the hunks
    lasts; harmless edits then fill up to the exact count. A function holds at most one of
    rename, signature change and move, and a moving function no change at all.
    """

    def __init__(self, mods: list[Module], rng: random.Random) -> None:
        self.mods = mods
        self.rng = rng
        self.funcs = [f for m in mods for f in m.funcs]
        self.callers: dict[int, list[Op]] = {}
        for func in self.funcs:
            for op in func.ops:
                if op.callee is not None:
                    self.callers.setdefault(id(op.callee), []).append(op)
        self.owner = {id(op): func for func in self.funcs for op in func.ops}
        self.helpers: list[Func] = []
        self.kinds: dict[str, int] = {}

    def plan(self, hunks: int) -> Culprit:
        culprit = self.culprit()
        leaves = [f for f in self.funcs if f.kind == "leaf"]
        steps = {
            "rename": (self.rename, leaves),
            "signature": (self.signature, leaves),
            "helper": (self.helper, self._free_ops(("affine",))),
            "move": (self.move, leaves),
            "static": (self.static_rename, [f for f in self.funcs if f.kind == "static"]),
            "local": (self.local_rename, [f for f in self.funcs if f.kind != "run"]),
            "define": (self.define, self.mods * 3),
        }
        for kind, (step, candidates) in steps.items():
            budget = int(SHARES[kind] * hunks)
            spent = 0
            for candidate in self.rng.sample(candidates, len(candidates)):
                if budget - spent < 2:
                    break
                spent += step(candidate, budget - spent)
            self.kinds[kind] = spent
        plain = self._free_ops(PLAIN)
        missing = hunks - 1 - sum(self.kinds.values())
        if missing > len(plain):
            raise ValueError(f"{hunks} hunks need more lines than {len(self.mods)} modules have")
        for op in self.rng.sample(plain, missing):
            op.edit = self.rng.choice(EDITS[op.kind])
        self.kinds["harmless"] = missing
        self.kinds["culprit"] = 1
        return culprit

    def _unchanged(self, func: Func) -> bool:
        return not (func.new_name or func.scale or func.moved_to >= 0)

    def _free_ops(self, kinds: tuple[str, ...]) -> list[Op]:
        return [
            op
            for f in self.funcs
            if f.moved_to < 0 and f.kind != "run"
            for op in f.ops
            if op.kind in kinds and not op.edit and op.helper is None
        ]

    def culprit(self) -> Culprit:
        """An off-by-one in a constant of a function that main reaches, where it changes the
        checksum (`acc += f(acc, c)` can absorb a change to `acc`: x + (x ^ s) keeps its value
        when bit k of x flips from 0 to 1 and bit k of s is set)."""
        reached = [f for f in self.funcs if f.kind == "driver" or id(f) in self.callers]
        candidates = [(f, op) for f in reached for op in f.ops if op.kind == "add"]
        good = output(self.mods, bad=False)
        for func, op in self.rng.sample(candidates, len(candidates)):
            op.edit = "culprit"  # so the function cannot move; other changes may touch it
            if output(self.mods, bad=True) != good:
                return Culprit(self.mods[func.module].path, op_line(op, func, bad=True))
            op.edit = ""
        raise ValueError("no constant changes the checksum")

    def rename(self, func: Func, budget: int) -> int:
        cost = 2 + len(self.callers.get(id(func), []))
        if not self._unchanged(func) or cost > budget or cost == 2:
            return 0
        word = self.rng.choice(RENAMED_WORDS)
        func.new_name = f"{self.mods[func.module].name}_{word}{func.name[-1]}"
        return cost

    def signature(self, func: Func, budget: int) -> int:
        cost = 2 + len(self.callers.get(id(func), []))
        if not self._unchanged(func) or cost > budget or cost == 2:
            return 0
        func.scale = True
        return cost

    def static_rename(self, func: Func, budget: int) -> int:
        cost = 1 + len(self.callers.get(id(func), []))
        if not self._unchanged(func) or cost > budget or cost == 1:
            return 0
        func.new_name = f"{self.rng.choice(RENAMED_WORDS)}_{func.name}"
        return cost

    def local_rename(self, func: Func, budget: int) -> int:
        cost = 1 + sum(op.kind == "var" for op in func.ops)
        new_var = f"v_{self.rng.choice(RENAMED_VARS)}"
        if func.moved_to >= 0 or func.new_var or cost == 1 or cost > budget:
            return 0
        func.new_var = new_var
        return cost

    def move(self, func: Func, budget: int) -> int:
        target = self.rng.choice(self.mods)
        gap = target.free_gap(self.rng)
        if (
            not self._unchanged(func)
            or func.new_var
            or any(op.edit for op in func.ops)
            or target.index == func.module
            or gap is None
        ):
            return 0
        func.moved_to = target.index
        target.inserts[gap] = [func]
        return 2

    def helper(self, first: Op, budget: int) -> int:
        """A helper for `first`'s `acc * m + c`, used by some of the drivers that compute it."""
        pair = (first.value, first.extra)
        host = self.rng.choice(self.mods)
        gap = host.free_gap(self.rng)
        header_gaps = [g for g in range(len(host.public) + 1) if g not in host.header_inserts]
        users = [
            op
            for op in self._free_ops(("affine",))
            if (op.value, op.extra) == pair and self.owner[id(op)].module != host.index
        ]
        if first.helper is not None or gap is None or not header_gaps or not users:
            return 0
        chosen = self.rng.sample(users, min(len(users), self.rng.randint(1, 4)))
        includes = {self.owner[id(op)].module for op in chosen} - {
            m.index for m in self.mods if host.index in (*m.includes, *m.new_includes)
        }
        cost = 2 + len(chosen) + sum(not self.mods[m].new_includes for m in includes)
        if cost > budget:
            return 0
        word = HELPER_WORDS[len(self.helpers) % len(HELPER_WORDS)]
        name = f"{host.name}_{word}{len(self.helpers)}"
        helper = Func("helper", host.index, name, 0, "", 0, [Op("affine", *pair)])
        self.helpers.append(helper)
        host.inserts[gap] = [helper]
        host.header_inserts[self.rng.choice(header_gaps)] = helper
        for op in chosen:
            op.helper = helper
        for module in includes:
            self.mods[module].new_includes.append(host.index)
        return cost

    def define(self, module: Module, budget: int) -> int:
        """A `#define` for a constant that functions after it in the file repeat."""
        gap = module.free_gap(self.rng, before=len(module.funcs) // 2)
        if gap is None:
            return 0
        ops = [
            op
            for f in module.funcs[gap:]
            if f.moved_to < 0 and f.kind != "run"
            for op in f.ops
            if op.kind == "add" and not op.edit
        ]
        if not ops:
            return 0
        value = self.rng.choice(ops).value
        same = [op for op in ops if op.value == value]
        chosen = self.rng.sample(same, min(len(same), self.rng.randint(1, 3), budget - 1))
        macro = f"K_{self.rng.choice(DEFINE_WORDS)}{len(module.inserts)}"
        module.inserts[gap] = [f"#define {macro} 0x{value:x}u"]
        for op in chosen:
            op.edit, op.macro = "define", macro
        return 1 + len(chosen)


# -- rendering ---------------------------------------------------------------------------------

Chunk = tuple[list[str], list[str], str]  # GOOD's lines, BAD's lines, indent for padding


def def_line(func: Func, bad: bool) -> str:
    params = {
        "leaf": "unsigned a, unsigned b",
        "static": "unsigned a, unsigned b",
        "driver": "unsigned a",
        "run": "unsigned seed",
        "helper": "unsigned x",
    }[func.kind]
    if bad and func.scale:
        params += ", unsigned scale"
    static = "static " if func.kind == "static" else ""
    return f"{static}unsigned {func.name_in(bad)}({params})"


def op_line(op: Op, func: Func, bad: bool) -> str:
    """The C line of `op` in `func`, as GOOD or BAD has it."""
    if op.callee is not None:
        if op.callee.kind == "driver":
            return f"\tacc += {op.callee.name}(acc);"
        scale = ", 1u" if bad and op.callee.scale else ""
        return f"\tacc += {op.callee.name_in(bad)}(acc, 0x{op.extra:x}u{scale});"
    if op.kind == "var":
        return f"\tacc += {func.var_in(bad)};"
    if op.kind == "affine":
        if bad and op.helper is not None:
            return f"\tacc = {op.helper.name}(acc);"
        return f"\tacc = acc * {op.value}u + {op.extra}u;"
    return _edited(op) if bad and op.edit else _plain_line(op)


def _plain_line(op: Op) -> str:
    return {
        "add": f"\tacc += 0x{op.value:x}u;",
        "mul": f"\tacc *= 0x{op.value:x}u;",
        "xsh": f"\tacc ^= acc >> {op.value};",
        "addb": f"\tacc += b * 0x{op.value:x}u;",
    }[op.kind]


def _edited(op: Op) -> str:
    if op.edit == "comment":
        return f"{_plain_line(op)} /* {NOTES[op.value % len(NOTES)]} */"
    if op.edit == "paren" and op.kind == "xsh":
        return f"\tacc ^= (acc >> {op.value});"
    if op.edit == "paren":
        return f"\tacc += (b * 0x{op.value:x}u);"
    if op.edit == "decimal":
        return _plain_line(op).replace(f"0x{op.value:x}u", f"{op.value}u")
    if op.edit == "local":
        return f"\t{{ const unsigned k = 0x{op.value:x}u; acc += k; }}"
    if op.edit == "define":
        return f"\tacc += {op.macro};"
    return f"\tacc += 0x{op.value + 1:x}u;"  # the culprit: off by one


def _same(*lines: str) -> Chunk:
    return list(lines), list(lines), ""


def function_chunks(func: Func) -> Iterator[Chunk]:
    """The function as GOOD and BAD write it, one chunk per line that may change."""
    yield [def_line(func, False)], [def_line(func, True)], ""
    if func.kind == "helper":
        m, c = func.ops[0].value, func.ops[0].extra
        yield _same("{", f"\treturn x * {m}u + {c}u;", "}", "")
        return
    start = "seed" if func.kind == "run" else f"a ^ 0x{func.seed:x}u"
    yield _same("{", f"\tunsigned acc = {start};")
    if func.kind != "run":
        yield (
            [f"\tunsigned {func.var_in(False)} = 0x{func.var_value:x}u;"],
            [f"\tunsigned {func.var_in(True)} = 0x{func.var_value:x}u;"],
            "\t",
        )
    for op in func.ops:
        yield [op_line(op, func, False)], [op_line(op, func, True)], "\t"
    yield _same("\treturn acc;", "}", "")


def whole(func: Func) -> list[str]:
    """The function's lines, for a function that moves (so has no other change)."""
    return [line for good, _, _ in function_chunks(func) for line in good]


def module_chunks(module: Module, mods: list[Module]) -> Iterator[Chunk]:
    yield _same(f"/* {module.path}: module {module.name} of the GDB-like benchmark. */")
    includes = [f'#include "{mods[i].name}.h"' for i in module.includes]
    added = [f'#include "{mods[i].name}.h"' for i in module.new_includes]
    yield includes, includes + added, ""
    yield _same("")
    for gap in range(len(module.funcs) + 1):
        yield [], [line for item in module.inserts.get(gap, []) for line in _inserted(item)], ""
        if gap == len(module.funcs):
            break
        func = module.funcs[gap]
        if func.moved_to >= 0:
            yield whole(func), [], ""
        else:
            yield from function_chunks(func)


def _inserted(item: Func | str) -> list[str]:
    if isinstance(item, str):
        return [item, ""]
    return whole(item)


def header_chunks(module: Module) -> Iterator[Chunk]:
    guard = f"{module.name.upper()}_H"
    yield _same(
        f"/* {module.header}: the interface of {module.path}. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
    )
    public = module.public
    for gap in range(len(public) + 1):
        helper = module.header_inserts.get(gap)
        if helper is not None:
            yield [], [f"{def_line(helper, True)};"], ""
        if gap < len(public):
            func = public[gap]
            yield [f"{def_line(func, False)};"], [f"{def_line(func, True)};"], ""
    yield _same("", "#endif")


def layout(chunks: Iterator[Chunk]) -> tuple[str, str, int]:
    """GOOD's and BAD's text of one file, and its number of sites (so of hunks).

    Pads with comment lines where fewer than SPACING unchanged lines separate two sites.
    """
    good: list[str] = []
    bad: list[str] = []
    sites = 0
    since = SPACING
    for old, new, indent in chunks:
        if old == new:
            good += old
            bad += new
            since += len(old)
            continue
        padding = [
            f"{indent}/* {NOTES[(sites + k) % len(NOTES)]} */" for k in range(SPACING - since)
        ]
        good += padding + old
        bad += padding + new
        sites += 1
        since = 0
    return _text(good), _text(bad), sites


def _text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


# -- evaluation --------------------------------------------------------------------------------


def call(func: Func, a: int, b: int, bad: bool) -> int:
    """What `func` returns, computed as the C program would (with the culprit when `bad`)."""
    if func.kind == "helper":
        return (a * func.ops[0].value + func.ops[0].extra) & MASK
    acc = a if func.kind == "run" else a ^ func.seed
    for op in func.ops:
        acc = _step(op, acc, b, func, bad) & MASK
    return acc


def _step(op: Op, acc: int, b: int, func: Func, bad: bool) -> int:
    if op.callee is not None:
        return acc + call(op.callee, acc, op.extra, bad)
    if op.kind == "add":
        return acc + op.value + int(bad and op.edit == "culprit")
    if op.kind == "mul":
        return acc * op.value
    if op.kind == "xsh":
        return acc ^ (acc >> op.value)
    if op.kind == "addb":
        return acc + b * op.value
    if op.kind == "var":
        return acc + func.var_value
    return acc * op.value + op.extra  # affine


def output(mods: list[Module], bad: bool) -> int:
    """The checksum `app` prints."""
    total = 0
    for module in mods:
        total = (total + call(module.funcs[-1], module.index, 0, bad)) & MASK
    return total


# -- files -------------------------------------------------------------------------------------

MAKEFILE = """\
# The GDB-like benchmark program. Any compile or link error fails the build.
CFLAGS = -std=c99 -O0 -Iinclude -MMD -MP \\
\t-Werror=implicit-function-declaration -Werror=incompatible-pointer-types
SRCS := main.c $(sort $(wildcard src/*/*.c))
OBJS := $(SRCS:%.c=build/%.o)

app: $(OBJS)
\t$(CC) -o $@ $(OBJS)

build/%.o: %.c
\t@mkdir -p $(@D)
\t$(CC) $(CFLAGS) -c $< -o $@

-include $(OBJS:.o=.d)

.PHONY: clean
clean:
\trm -rf build app
"""

TEST = """\
#!/bin/sh
# The program's checksum must be GOOD's.
actual=$(./app) || exit 125
[ "$actual" = "{expected}" ] && exit 0
echo "checksum $actual, expected {expected}"
exit 1
"""


def main_c(mods: list[Module]) -> str:
    lines = ["#include <stdio.h>", *(f'#include "{m.name}.h"' for m in mods), ""]
    lines += ["int main(void)", "{", "\tunsigned total = 0;"]
    lines += [f"\ttotal += {m.funcs[-1].name}({m.index}u);" for m in mods]
    lines += ['\tprintf("%u\\n", total);', "\treturn 0;", "}"]
    return _text(lines)


def trees(project: Project) -> tuple[dict[str, str], dict[str, str], int]:
    """GOOD's and BAD's files, and the number of sites over all files."""
    good: dict[str, str] = {
        "Makefile": MAKEFILE,
        "test.sh": TEST.format(expected=project.good_output),
        ".gitignore": "/build/\n/app\n",
        "main.c": main_c(project.modules),
    }
    bad = dict(good)
    sites = 0
    for module in project.modules:
        for path, chunks in (
            (module.path, module_chunks(module, project.modules)),
            (module.header, header_chunks(module)),
        ):
            good[path], bad[path], count = layout(chunks)
            sites += count
    return good, bad, sites


def generate(hunks: int, modules: int, seed: int) -> Project:
    """The model of a project whose GOOD→BAD change has `hunks` hunks."""
    rng = random.Random(seed)
    mods = make_program(modules, rng)
    planner = _Planner(mods, rng)
    culprit = planner.plan(hunks)
    project = Project(
        modules=mods,
        helpers=planner.helpers,
        culprit=culprit,
        hunks=sum(planner.kinds.values()),
        kinds=planner.kinds,
        good_output=output(mods, bad=False),
        bad_output=output(mods, bad=True),
    )
    return project


def write_repo(project: Project, dest: Path) -> tuple[str, str]:
    """The project as a new git repository at `dest`: GOOD's and BAD's commit SHAs."""
    good, bad, sites = trees(project)
    if sites != project.hunks:
        raise AssertionError(f"rendered {sites} sites, planned {project.hunks}")
    dest.mkdir(parents=True)
    samples.init_repo(dest)
    shas = []
    for index, (tree, message) in enumerate(
        [(good, "GDB-like program"), (bad, "Refactor: renames, helpers, moves, cleanups")]
    ):
        for path, text in tree.items():
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        shas.append(samples.commit_all(dest, message, AUTHOR, index))
    return shas[0], shas[1]
