"""GOOD's and BAD's C text of gdb_project.py's model, written so that every site is one hunk.

Owns the C lines of a function, a module's .c file and its header, as chunks that are the same on
both sides or a site that differs; `layout`, which pads with comment lines so that at least
SPACING unchanged lines separate two sites (git's diff then shows each site as one hunk, and the
sites counted are the hunks); and `main.c`.
"""

from __future__ import annotations

from collections.abc import Iterator

from gdb_model import Func, Module, Op

# Unchanged lines between two sites. git's hunks have 3 lines of context and merge when their
# contexts touch (6 lines apart or fewer); one more line of margin keeps them apart even when
# git slides an inserted block by a line along identical neighbours.
SPACING = 8
NOTES = ("hot path", "see ChangeLog", "keep in sync", "checked", "was a macro", "per review")

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


def main_c(mods: list[Module]) -> str:
    lines = ["#include <stdio.h>", *(f'#include "{m.name}.h"' for m in mods), ""]
    lines += ["int main(void)", "{", "\tunsigned total = 0;"]
    lines += [f"\ttotal += {m.funcs[-1].name}({m.index}u);" for m in mods]
    lines += ['\tprintf("%u\\n", total);', "\treturn 0;", "}"]
    return _text(lines)
