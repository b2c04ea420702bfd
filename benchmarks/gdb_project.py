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

This file writes the project (its files, and a repository with GOOD and BAD as two commits);
gdb_model.py holds the model and its evaluation, gdb_change.py plans BAD's change on it, and
gdb_render.py writes both sides' C text.
"""

from __future__ import annotations

import random
from pathlib import Path

from gdb_change import Planner
from gdb_model import Project, make_program, output
from gdb_render import header_chunks, layout, main_c, module_chunks

from ddchange import samples

AUTHOR = "Bench Mark <bench@example.org>"


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
    planner = Planner(mods, rng)
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
