"""The model behind gdb_project.py: a GDB-like C program as data, GOOD's code and BAD's changes.

Owns the model's types (a `Module` is a C file and its header, a `Func` one of its functions, an
`Op` one line of a body; the fields after `ops` and `edit` say what BAD changes), `make_program`,
which draws GOOD's program from a seed (modules in GDB's directories, calls mostly within a
directory, a few popular callees), and the program evaluated in Python as the C program computes
it (32-bit unsigned arithmetic), with or without the culprit: the checksum `app` prints.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

MASK = 0xFFFFFFFF
DIRS = ("gdb", "bfd", "opcodes", "libiberty", "readline", "sim", "gdbserver", "gnulib")
STEMS = ("symtab", "infrun", "valops", "frame", "target", "breakpoint", "parse", "dwarf", "elf")
LEAF_WORDS = ("scan", "hash", "fold", "mix", "pack", "lookup", "merge", "probe", "count", "walk")
DRIVER_WORDS = ("update", "refresh", "resolve", "step", "sync")
VAR_WORDS = ("step", "bias", "seed", "span", "gain", "skew")


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
