"""A simulated compiler, linker and test for the generated GDB-like project: no gcc needed.

Owns the test function that benchmarks/gdb_like.py gives ddchange's search at sizes where a real
build per test would take hours. A configuration (a set of change-unit ids) is materialized by
ddchange's own `content.materialize` on top of GOOD's files, and then judged by the rules a C
compiler and linker apply to this project's code:

- every function a body calls is declared before the call (in an included header, or earlier
  in the same file), and every declaration of it in scope has the call's number of arguments;
- no declaration in scope disagrees with a definition's number of parameters;
- no file defines a name twice, every `v_` local is declared in its function before it is used,
  and every `K_` constant is `#define`d before it is used;
- every called function that is not static in the calling file is defined in exactly one file,
  and no exported name is defined in two files.

Broken → UNRESOLVED. Otherwise the test FAILs when the culprit's line (BAD's text) is in its file,
and PASSes when it is not. The rules parse the generator's own code shapes with regular
expressions (gdb_project.py writes one statement per line, no nested calls, only `/* */`
comments on one line); gdb_like.py checks them against gcc on every configuration of its real
run.

Key idea: facts are per file and a file's content recurs across configurations, so each
content is parsed once (cached by content), and each translation unit is judged once per
combination of its own facts and its headers' facts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ddchange.diff.content import materialize
from ddchange.diff.hunks import Conflict, Diff, FileState
from ddchange.model import Outcome

DEF = re.compile(r"(static )?(?:unsigned|int) (\w+)\(([^)]*)\)")
DECL = re.compile(r"(static )?unsigned (\w+)\(([^)]*)\);")
CALL = re.compile(r"\b([A-Za-z_]\w*)\(([^()]*)\)")
INCLUDE = re.compile(r'#include ([<"])([^>"]+)[>"]')
DEFINE = re.compile(r"#define (K_\w+) ")
LOCAL = re.compile(r"\tunsigned (v_\w+) = ")
LOCAL_USE = re.compile(r"\bv_\w+")
MACRO_USE = re.compile(r"\bK_\w+")
COMMENT = re.compile(r"/\*.*?\*/")
SYSTEM_HEADERS = {"stdio.h": frozenset({"printf"})}  # variadic: no arity to check


@dataclass(frozen=True)
class Facts:
    """What one file tells the compiler; `broken` lists what fails in it on its own."""

    includes: tuple[str, ...]  # "quoted" headers, as include/<name>
    system: frozenset[str]  # names declared by the <system> headers it includes
    decls: tuple[tuple[str, int, int], ...]  # name, arity, line
    defs: tuple[tuple[str, int, int, bool], ...]  # name, arity, line, static
    calls: tuple[tuple[str, int, int], ...]  # name, arity, line
    broken: tuple[str, ...]  # error messages


@dataclass(frozen=True)
class Unit:
    """A translation unit's verdict: its errors (none if it compiles), exports and needs."""

    errors: tuple[str, ...]
    exports: tuple[str, ...]
    needs: frozenset[str]


def arity(params: str) -> int:
    params = params.strip()
    return 0 if params in ("", "void") else params.count(",") + 1


class _Parser:
    """One pass over a file's lines, top level and function bodies apart.

    Error messages are worded as gcc words them, so that ddchange's failure resolution
    (`trial.missing.missing_names`) reads the same names from them as from a real build.
    """

    def __init__(self) -> None:
        self.includes: list[str] = []
        self.system: set[str] = set()
        self.decls: list[tuple[str, int, int]] = []
        self.defs: list[tuple[str, int, int, bool]] = []
        self.calls: list[tuple[str, int, int]] = []
        self.macros: set[str] = set()
        self.locals: set[str] | None = None  # None outside a function body
        self.broken: list[str] = []

    def line(self, number: int, text: str) -> None:
        text = COMMENT.sub("", text).rstrip()
        if self.locals is not None:
            self.body(number, text)
        else:
            self.top(number, text)

    def top(self, number: int, text: str) -> None:
        if match := INCLUDE.fullmatch(text):
            if match[1] == '"':
                self.includes.append(f"include/{match[2]}")
            else:
                self.system |= SYSTEM_HEADERS.get(match[2], frozenset())
        elif match := DEFINE.match(text):
            self.macros.add(match[1])
        elif match := DECL.fullmatch(text):
            self.decls.append((match[2], arity(match[3]), number))
        elif match := DEF.fullmatch(text):
            if any(name == match[2] for name, *_ in self.defs):
                self.broken.append(f"error: redefinition of ‘{match[2]}’")
            self.defs.append((match[2], arity(match[3]), number, bool(match[1])))
            self.locals = set()

    def body(self, number: int, text: str) -> None:
        assert self.locals is not None
        if text == "}":
            self.locals = None
            return
        if match := LOCAL.match(text):
            self.locals.add(match[1])
            text = text[match.end() :]
        undeclared = [name for name in LOCAL_USE.findall(text) if name not in self.locals]
        undeclared += [name for name in MACRO_USE.findall(text) if name not in self.macros]
        self.broken += [f"error: ‘{name}’ undeclared" for name in undeclared]
        for name, args in CALL.findall(text):
            self.calls.append((name, arity(args), number))


def parse(content: bytes) -> Facts:
    """The facts of one C source or header."""
    parser = _Parser()
    for number, text in enumerate(content.decode().split("\n"), 1):
        parser.line(number, text)
    return Facts(
        tuple(parser.includes),
        frozenset(parser.system),
        tuple(parser.decls),
        tuple(parser.defs),
        tuple(parser.calls),
        tuple(parser.broken),
    )


def compile_unit(unit: Facts, headers: list[Facts | None]) -> Unit:
    """The compiler's verdict on a .c file with the facts of the headers it includes."""
    statics = {name for name, _, _, static in unit.defs if static}
    exports = tuple(name for name, _, _, static in unit.defs if not static)
    needs = frozenset(
        name for name, _, _ in unit.calls if name not in statics and name not in unit.system
    )
    if any(header is None for header in headers):
        return Unit(("fatal error: a header is missing",), exports, needs)
    present = [header for header in headers if header is not None]
    errors = [*unit.broken, *(e for header in present for e in header.broken)]
    errors += _conflicts(unit, present) + _call_errors(unit, present)
    return Unit(tuple(errors), exports, needs)


def _conflicts(unit: Facts, headers: list[Facts]) -> list[str]:
    """Declarations and definitions in one unit that disagree on the number of parameters."""
    declared: dict[str, set[int]] = {}
    for name, count, _ in [d for header in headers for d in header.decls] + list(unit.decls):
        declared.setdefault(name, set()).add(count)
    for name, count, _, _ in unit.defs:
        declared.setdefault(name, set()).add(count)
    return [
        f"error: conflicting types for ‘{name}’"
        for name, counts in declared.items()
        if len(counts) > 1
    ]


def _call_errors(unit: Facts, headers: list[Facts]) -> list[str]:
    """Calls to a function not declared before them, or with the wrong number of arguments."""
    scope = {name: count for header in headers for name, count, _ in header.decls}
    local = [(line, name, count) for name, count, line in unit.decls]
    local += [(line, name, count) for name, count, line, _ in unit.defs]
    errors = []
    for name, count, line in unit.calls:
        if name in unit.system:
            continue
        seen = [n for at, candidate, n in local if candidate == name and at < line]
        known = [scope[name]] if name in scope else seen
        if not known:
            errors.append(f"error: implicit declaration of function ‘{name}’")
        elif known[0] != count:
            many = "many" if count > known[0] else "few"
            errors.append(f"error: too {many} arguments to function ‘{name}’")
    return errors


class OverBudget(Exception):
    """The oracle was asked for more tests than its budget allows."""


class Oracle:
    """The simulated build-and-test of one GOOD..BAD change, callable as ddchange's `test`.

    `base` holds GOOD's files (those no unit touches are read from there). `calls` counts the
    configurations judged, `outcomes` counts them by outcome, and `output` is what the last
    build said (gcc's wording), for ddchange's failure resolution. A call beyond `budget`
    raises OverBudget, which ends the search that asked.
    """

    def __init__(
        self,
        diff: Diff,
        base: Mapping[str, bytes],
        culprit: tuple[str, str],
        budget: int | None = None,
    ) -> None:
        self.diff = diff
        self.single = [
            Diff((file,), tuple(diff.by_id[unit] for unit in file.units), ()) for file in diff.files
        ]
        self.base = dict(base)
        self.culprit_path = culprit[0]
        self.culprit_line = ("\n" + culprit[1] + "\n").encode()
        self.states: dict[tuple[int, frozenset[str]], dict[str, FileState | None]] = {}
        self.facts: dict[bytes, Facts] = {}
        self.units: dict[tuple[int, ...], Unit] = {}
        self.budget = budget
        self.calls = 0
        self.outcomes: Counter[Outcome] = Counter()
        self.output = ""

    def __call__(self, config: frozenset[str]) -> Outcome:
        if self.budget is not None and self.calls >= self.budget:
            raise OverBudget
        outcome = self.judge(config)
        self.calls += 1
        self.outcomes[outcome] += 1
        return outcome

    def judge(self, config: Collection[str]) -> Outcome:
        files = self.files(config)
        if files is None:
            self.output = "the chosen changes conflict"
            return Outcome.UNRESOLVED
        errors = self.errors(files)
        self.output = "\n".join(errors)
        if errors:
            return Outcome.UNRESOLVED
        culprit = files.get(self.culprit_path, b"")
        return Outcome.FAIL if self.culprit_line in b"\n" + culprit else Outcome.PASS

    def files(self, config: Collection[str]) -> dict[str, bytes] | None:
        """Every file of the tree with exactly the units of `config` applied to GOOD; None if
        no tree has them (`hunks.Conflict`).

        A changed file's states depend only on which of its own units are chosen, so each
        file is materialized on its own (a one-file Diff) and cached by that choice.
        (`materialize` over the whole diff would also see two file changes that conflict in a
        directory; the generated projects have none.)
        """
        chosen: dict[int, set[str]] = {}
        for unit in config:
            chosen.setdefault(self.diff.by_id[unit].file, set()).add(unit)
        files = dict(self.base)
        for file in self.diff.files:
            key = (file.index, frozenset(chosen.get(file.index, ())))
            states = self.states.get(key)
            if states is None:
                try:
                    states = self.states[key] = materialize(self.single[file.index], key[1])
                except Conflict:
                    return None
            for path, state in states.items():
                if state is None:
                    files.pop(path, None)
                else:
                    files[path] = bytes(state.content)
        return files

    def errors(self, files: Mapping[str, bytes]) -> list[str]:
        """What the build says when this tree does not build (nothing if it does): the errors
        of the first unit that does not compile, else every link error."""
        exported: Counter[str] = Counter()
        needed: set[str] = set()
        for path in sorted(files):
            if not path.endswith(".c"):
                continue
            unit = self.unit(files[path], files)
            if unit.errors:
                return [f"{path}: {error}" for error in unit.errors]
            exported.update(unit.exports)
            needed |= unit.needs
        errors = [f"multiple definition of `{name}'" for name, n in exported.items() if n > 1]
        errors += [f"undefined reference to `{name}'" for name in sorted(needed - exported.keys())]
        return errors

    def unit(self, content: bytes, files: Mapping[str, bytes]) -> Unit:
        facts = self.parsed(content)
        headers = [self.parsed(files[path]) if path in files else None for path in facts.includes]
        key = (id(facts), *(id(header) for header in headers))
        known = self.units.get(key)
        if known is None:
            known = self.units[key] = compile_unit(facts, headers)
        return known

    def parsed(self, content: bytes) -> Facts:
        # The cache keeps every Facts alive, so id() in the unit cache's keys stays unique.
        known = self.facts.get(content)
        if known is None:
            known = self.facts[content] = parse(content)
        return known
