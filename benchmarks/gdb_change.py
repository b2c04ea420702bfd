"""BAD's change to gdb_project.py's model: which edits, of which kind, in which functions.

Owns the shares of the change's kinds (rename, signature, helper, move, static, local, define,
harmless, one culprit) and `Planner`, which marks the changes on the model and counts the hunks
each one adds, so that the change has exactly the hunks asked for.
"""

from __future__ import annotations

import random

from gdb_model import Culprit, Func, Module, Op, output
from gdb_render import op_line

RENAMED_WORDS = ("digest", "blend", "stir", "weave", "squash", "gather", "sift", "churn", "tally")
RENAMED_VARS = ("stride", "offset", "salt", "width", "boost", "tilt")
HELPER_WORDS = ("affine", "ramp", "lerp", "scale", "shift")
DEFINE_WORDS = ("STRIDE", "PRIME", "SALT", "WEIGHT", "LIMIT", "ROUNDS")

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


class Planner:
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
