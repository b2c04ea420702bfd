"""`ddchange reduce` side by side with other reducers: the same inputs, the same test, the same
time limit.

    .venv/bin/python benchmarks/reduce_peers.py [--time-limit 300] [--inputs html,json]
        [--tools ddchange,cvise] [--peers-venv /work/peers-venv] [--ddchange PATH]
        [--results PATH] [--work DIR]     # rewrites its section of benchmarks/RESULTS.md

The peers: C-Vise and C-Reduce (Debian: `apt-get install -y cvise creduce csmith
libcsmith-dev antlr4 clang-14`; csmith and clang-14 for the C inputs), and from PyPI, in a
venv of their own (Python 3.12 or newer, for a current shrinkray; picire imports
pkg_resources, hence setuptools<81):

    python3.12 -m venv /work/peers-venv && /work/peers-venv/bin/pip install shrinkray \
        picire picireny lithium-reducer fuzzingbook 'setuptools<81'

A tool that is not there is skipped, with the reason in the table. Each input is generated here,
deterministically, with its interestingness test: a shell script that exits 0 when the input is
still interesting (the convention of C-Vise, C-Reduce and shrinkray; `ddchange reduce
--interesting-exit 0`). Every tool runs that script through a wrapper that appends a line to a
counter file, so `tests` counts the same thing for all: real runs of the check. Each tool works
on its own copy of the input in a directory of its own (the originals are never touched) under
`--time-limit` seconds of wall clock; then its process group gets SIGINT (as Ctrl-C would),
SIGTERM 10 s later, SIGKILL 10 s after that, and what it had written so far is its result: the
file reduced in place by C-Vise and C-Reduce; shrinkray's last reduction in its history;
Lithium's last interesting candidate; ddchange's FILE.reduced; what the driver written here for
the textbook's reducer saved (each smaller interesting input); picire and picireny write only at
the end.

Per input and tool it records the result's size in bytes and in tokens (`TOKEN` below; white
space is not counted), the tests run, the wall time, and whether the result is still
interesting: this script runs the check on it again (`wrong` when it is not).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import reduce_real
import results
from reduce_inputs import INPUTS, TOKEN, Input, Setup, Unavailable, _out, tokens
from results import RESULTS, write_section

HEADING = "## Reducing inputs, against other reducers (`benchmarks/reduce_peers.py`)"
GRACE = 10.0  # seconds between SIGINT, SIGTERM and SIGKILL at the time limit
MARK = "REDUCE_PEERS_RUN"  # in the environment of every process a run starts, to sweep them
DEBIAN_JARS = "/usr/share/java"  # Debian's antlr4 and what its tool needs, for picireny
ALL_INPUTS = {**INPUTS, **reduce_real.INPUTS}
# The run without --inputs: the Mozilla page, the module with too many nested blocks, the JSON
# document (picireny's grammar), the 1.2 MB log, and real crashes: three of C, three of Python,
# two of structured data (TOML, YAML). The others are there by name.
DEFAULT = ["html", "python", "json", "log", "c-gcc-ice-omp-taskgroup", "c-clang-dump-struct"]
DEFAULT += ["c-clang-va-arg-vla", "py-black-fmt-off", "py-pyflakes-print", "py-pyflakes-global"]
DEFAULT += ["toml-tomlkit-indented-aot", "yaml-yamllint-stray-bracket"]


# -- the tools ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One tool on one input: its directory, with the input's copy in `work`."""

    dir: Path
    input: Input
    check: Path  # the input's check.sh
    wrapper: Path  # counts, then runs the check
    counter: Path

    @property
    def work(self) -> Path:
        return self.dir / "work"

    @property
    def file(self) -> Path:
        return self.work / self.input.filename


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    cwd: Path
    result: Callable[[bool], Path | None]  # given whether the time limit stopped it
    env: dict[str, str] = field(default_factory=dict)
    # what the tool says of its own run, after it (read from its report), for `ended`
    said: Callable[[], str] = lambda: ""


@dataclass(frozen=True)
class Tool:
    name: str
    parallel: bool  # runs tests in parallel (given the jobs)
    version: Callable[[Setup], str]  # raises Unavailable
    launch: Callable[[Setup, Run], Launch]  # raises Unavailable for an input it cannot take


def _in_place(run: Run) -> Callable[[bool], Path | None]:
    return lambda _stopped: run.file


def _command_version(argv: list[str], install: str) -> str:
    if shutil.which(argv[0]) is None:
        raise Unavailable(f"`{argv[0]}` is not on PATH ({install})")
    said = _out(argv).splitlines()
    if not said:
        raise Unavailable(f"`{shlex.join(argv)}` prints nothing: it does not run here")
    return said[0]


def _debian(package: str) -> str:
    version = _out(["dpkg-query", "-W", "-f", "${Version}", package])
    return f" (Debian {version})" if version and " " not in version else ""


def ddchange_version(setup: Setup) -> str:
    said = _out([str(setup.ddchange), "--version"]).split()
    if not said:
        raise Unavailable(f"`{setup.ddchange} --version` does not run")
    return said[-1]


def ddchange_launch(setup: Setup, run: Run) -> Launch:
    reduced = run.work / f"{run.input.filename}.reduced"
    report = run.dir / "ddchange.json"
    argv = [str(setup.ddchange), "reduce", run.input.filename, "--interesting-exit", "0"]
    argv += ["-j", str(setup.jobs), "--json", str(report), "-q"]

    def said() -> str:
        """How many of the runs the reduction asked for: with -j N the others were started
        ahead, on the likely course, and not needed (the log and result are -j 1's)."""
        with contextlib.suppress(OSError, ValueError, KeyError):
            done = json.loads(report.read_text())
            minimal = "1-minimal" if done["minimal"] else "not 1-minimal"
            return f"{done['tests_run']:,} asked, {minimal}"
        return ""

    return Launch(
        [*argv, "--", str(run.wrapper)],
        run.work,
        lambda _stopped: reduced if reduced.exists() else None,
        {"XDG_CACHE_HOME": str(run.dir / "cache")},  # an empty journal: no resuming
        said,
    )


def cvise_version(setup: Setup) -> str:
    return _command_version(["cvise", "--version"], "apt-get install -y cvise") + _debian("cvise")


def cvise_launch(setup: Setup, run: Run) -> Launch:
    not_c = [] if run.input.is_c else ["--not-c"]
    argv = ["cvise", "--n", str(setup.jobs), *not_c, str(run.wrapper), run.input.filename]
    return Launch(argv, run.work, _in_place(run))


def creduce_version(setup: Setup) -> str:
    version = _command_version(["creduce", "--version"], "apt-get install -y creduce")
    return version + _debian("creduce")


def creduce_launch(setup: Setup, run: Run) -> Launch:
    not_c = [] if run.input.is_c else ["--not-c"]
    argv = ["creduce", "--n", str(setup.jobs), *not_c, str(run.wrapper), run.input.filename]
    return Launch(argv, run.work, _in_place(run))


def shrinkray_version(setup: Setup) -> str:
    return "shrinkray " + setup.dist_version("shrinkray")


def shrinkray_launch(setup: Setup, run: Run) -> Launch:
    argv = [str(setup.peer("shrinkray")), "--ui", "basic", "--no-llm"]
    argv += ["--parallelism", str(setup.jobs), "--input-type", "basename"]
    argv += [str(run.wrapper), run.input.filename]

    def result(stopped: bool) -> Path | None:
        # Stopped, shrinkray may leave its file empty: it truncates the file, then writes its
        # best from another thread. Its history (on by default) keeps each reduction as it
        # comes, written at once: the last one is its best.
        kept = sorted(run.work.glob(f".shrinkray/*/reductions/*/{run.input.filename}"))
        return kept[-1] if stopped and kept else run.file

    return Launch(argv, run.work, result, {"SHRINKRAY_LLM": "0"})


def picire_version(setup: Setup) -> str:
    return "picire " + setup.dist_version("picire")


def _written(path: Path) -> Callable[[bool], Path | None]:
    return lambda _stopped: path if path.exists() else None


def picire_launch(setup: Setup, run: Run) -> Launch:
    out = run.dir / "out"
    argv = [str(setup.peer("picire")), "-i", run.input.filename, "--test", str(run.wrapper)]
    argv += ["-p", "-j", str(setup.jobs), "--atom", "both", "-o", str(out), "-l", "WARNING"]
    return Launch(argv, run.work, _written(out / run.input.filename))


def antlr_jar(setup: Setup) -> Path:
    """A jar that runs Debian's ANTLR 4 tool (`apt-get install antlr4`) with `java -jar`, as
    picireny does: only a manifest naming the jars it needs. (picireny's own way,
    antlerinator, downloads the tool from antlr.org, which this machine cannot reach.)"""
    needed = ["antlr4", "antlr4-runtime", "antlr3-runtime", "stringtemplate4", "treelayout"]
    needed += ["icu4j", "javax.json"]
    jars = [Path(DEBIAN_JARS, f"{name}.jar") for name in needed]
    missing = [jar.name for jar in jars if not jar.exists()]
    if shutil.which("java") is None or missing:
        raise Unavailable(
            "needs java and Debian's ANTLR 4 tool (apt-get install -y antlr4); "
            "antlerinator's download of the ANTLR jar cannot reach antlr.org here"
        )
    line = "Class-Path: " + " ".join(str(jar) for jar in jars)
    chunks = [line[:70]] + [" " + line[i : i + 69] for i in range(70, len(line), 69)]
    manifest = "Manifest-Version: 1.0\r\nMain-Class: org.antlr.v4.Tool\r\n"
    manifest += "\r\n".join(chunks) + "\r\n\r\n"
    jar = setup.work / "antlr-debian.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", manifest)
    return jar


def picireny_version(setup: Setup) -> str:
    version = setup.dist_version("picireny")
    tool = _out(["dpkg-query", "-W", "-f", "${Version}", "antlr4"])
    antlr_jar(setup)
    return f"picireny {version} (ANTLR tool {tool} from Debian)"


def picireny_launch(setup: Setup, run: Run) -> Launch:
    if run.input.antlr is None:
        raise Unavailable(f"no ANTLR grammar in this script for the {run.input.name} input")
    grammar, start = run.input.antlr
    name = re.search(r"^grammar (\w+);", grammar, re.MULTILINE)
    assert name is not None
    path = run.dir / f"{name.group(1)}.g4"
    path.write_text(grammar)
    out = run.dir / "out"
    argv = [str(setup.peer("picireny")), "-i", run.input.filename, "--test", str(run.wrapper)]
    argv += ["-g", str(path), "-s", start, "--antlr", str(antlr_jar(setup))]
    argv += ["-p", "-j", str(setup.jobs), "-o", str(out), "-l", "WARNING"]
    return Launch(argv, run.work, _written(out / run.input.filename))


LITHIUM_CONDITION = '''\
"""Lithium's interestingness module: the check, through the counting wrapper."""
import subprocess
from pathlib import Path


def interesting(args, temp_prefix):
    wrapper, testcase = args[0], args[-1]
    return subprocess.run([wrapper], cwd=Path(testcase).resolve().parent).returncode == 0
'''


def lithium_version(setup: Setup) -> str:
    return "lithium-reducer " + setup.dist_version("lithium-reducer")


def lithium_launch(setup: Setup, run: Run) -> Launch:
    condition = run.dir / "condition.py"
    condition.write_text(LITHIUM_CONDITION)

    def result(stopped: bool) -> Path | None:
        if not stopped:
            return run.file
        # Lithium writes each candidate over the file before testing it: when it is stopped
        # mid-test, its best is the last candidate it kept a copy of as interesting.
        kept = list(run.work.glob("tmp*/*-interesting*"))
        return max(kept, key=lambda p: int(p.name.split("-")[0])) if kept else None

    argv = [str(setup.peer("python")), "-m", "lithium", str(condition), str(run.wrapper)]
    return Launch([*argv, run.input.filename], run.work, result)


FUZZINGBOOK_DRIVER = '''\
"""The fuzzingbook's DeltaDebuggingReducer on a file, or with GRAMMAR its GrammarReducer,
through the counting wrapper.

    python driver.py WRAPPER FILENAME OUT [GRAMMAR]

Bytes are read as latin-1, one character each. Each smaller input seen to be interesting is
written to OUT at once, so a run stopped at the time limit keeps its best. GRAMMAR names the
book's EBNF grammar of the file's format in `fuzzingbook.Grammars`; its white space `<ws>` is
one space there (the line that would take any run of white space is commented out in the
book), so it takes any run of white space here, as the format does.
"""
import os
import string
import subprocess
import sys
from pathlib import Path

from fuzzingbook import Grammars
from fuzzingbook.Fuzzer import Runner
from fuzzingbook.Parser import EarleyParser
from fuzzingbook.Reducer import DeltaDebuggingReducer, GrammarReducer

wrapper, filename, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
scratch = Path("scratch")
scratch.mkdir(exist_ok=True)


class CheckRunner(Runner):
    best = None

    def run(self, inp):
        (scratch / filename).write_bytes(inp.encode("latin-1"))
        code = subprocess.run([wrapper], cwd=scratch).returncode
        if code == 0 and (self.best is None or len(inp) < self.best):
            self.best = len(inp)
            out.with_suffix(".tmp").write_bytes(inp.encode("latin-1"))
            os.replace(out.with_suffix(".tmp"), out)
        return inp, Runner.FAIL if code == 0 else Runner.PASS


text = Path(filename).read_bytes().decode("latin-1")
if len(sys.argv) > 4:
    grammar = dict(getattr(Grammars, sys.argv[4]))
    if "<ws>" in grammar:
        grammar["<ws>"] = ["<space>*"]
        grammar["<space>"] = Grammars.srange(string.whitespace)
    parser = EarleyParser(Grammars.convert_ebnf_grammar(grammar))
    reduced = GrammarReducer(CheckRunner(), parser).reduce(text)
else:
    reduced = DeltaDebuggingReducer(CheckRunner()).reduce(text)
out.write_bytes(reduced.encode("latin-1"))
'''


def fuzzingbook_version(setup: Setup) -> str:
    return "fuzzingbook " + setup.dist_version("fuzzingbook")


def fuzzingbook_launch(setup: Setup, run: Run, grammar: str | None = None) -> Launch:
    """The fuzzingbook's DeltaDebuggingReducer, or with `grammar` (the name of the book's
    grammar of the input's format) its GrammarReducer."""
    driver = run.dir / "driver.py"
    driver.write_text(FUZZINGBOOK_DRIVER)
    out = run.dir / "out" / run.input.filename
    out.parent.mkdir()
    argv = [str(setup.peer("python")), str(driver), str(run.wrapper), run.input.filename]
    return Launch([*argv, str(out), *([grammar] if grammar else [])], run.work, _written(out))


def grammar_launch(setup: Setup, run: Run) -> Launch:
    if run.input.book_grammar is None:
        raise Unavailable(f"the fuzzingbook has no grammar of the {run.input.name} input's format")
    return fuzzingbook_launch(setup, run, run.input.book_grammar)


TOOLS = {
    tool.name: tool
    for tool in [
        Tool("ddchange", True, ddchange_version, ddchange_launch),
        Tool("cvise", True, cvise_version, cvise_launch),
        Tool("creduce", True, creduce_version, creduce_launch),
        Tool("shrinkray", True, shrinkray_version, shrinkray_launch),
        Tool("picire", True, picire_version, picire_launch),
        Tool("picireny", True, picireny_version, picireny_launch),
        Tool("lithium", False, lithium_version, lithium_launch),
        Tool("fuzzingbook-dd", False, fuzzingbook_version, fuzzingbook_launch),
        Tool("fuzzingbook-grammar", False, fuzzingbook_version, grammar_launch),
    ]
}
HOW = {
    "ddchange": "`ddchange reduce FILE --interesting-exit 0 -j JOBS --json R -q -- WRAPPER` "
    "(default granularity: token; result FILE.reduced)",
    "cvise": "`cvise --n JOBS [--not-c] WRAPPER FILE` (`--not-c` on all but the C input)",
    "creduce": "`creduce --n JOBS [--not-c] WRAPPER FILE` (likewise)",
    "shrinkray": "`shrinkray --ui basic --no-llm --parallelism JOBS --input-type basename "
    "WRAPPER FILE` (its LLM passes would download a model; its tree-sitter grammars, fetched "
    "at run time, cannot be had here: it reduces without those passes); stopped at the time "
    "limit, its result is the last reduction its history kept (its file may be left empty)",
    "picire": "`picire -i FILE --test WRAPPER -p -j JOBS --atom both` (lines, then characters)",
    "picireny": "`picireny -i FILE --test WRAPPER -g GRAMMAR.g4 -s START --antlr JAR -p -j "
    "JOBS` (JSON only: a 16-line JSON grammar written here)",
    "lithium": "`python -m lithium CONDITION.py WRAPPER FILE` (default: lines, `minimize`)",
    "fuzzingbook-dd": "`DeltaDebuggingReducer(runner).reduce(text)` from `fuzzingbook.Reducer` "
    "on the characters (a driver written here)",
    "fuzzingbook-grammar": "`GrammarReducer(runner, EarleyParser(grammar)).reduce(text)` from "
    "`fuzzingbook.Reducer`, with the book's own grammar of the input's format (JSON only: "
    "`JSON_EBNF_GRAMMAR`, its white space widened from one space to any run of it; the book "
    "has no grammar of the other formats) (a driver written here)",
}


# -- one run ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    tool: str
    jobs: int
    bytes: int | None  # None: the tool left no result
    tokens: int | None
    tests: int
    wall: float
    ended: str  # "done", "time limit", "exit N"
    interesting: str  # "yes", "wrong", "—"
    result: bytes = b""  # what it left, to say why a smaller one is smaller


def _sweep(mark: str) -> None:
    """Kill what is left of a run: every process that carries its mark in its environment (they
    all descend from the tool this script started)."""
    needle = f"{MARK}={mark}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            with contextlib.suppress(OSError):
                os.kill(int(proc.name), signal.SIGKILL)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the tool as a user at its terminal would: SIGINT (Ctrl-C) to its process group, then
    SIGTERM and SIGKILL, GRACE seconds apart. (SIGTERM first caught shrinkray, now and then,
    between the truncation of its file and the write of its best: an empty result.)"""
    for sig, wait in ((signal.SIGINT, GRACE), (signal.SIGTERM, GRACE), (signal.SIGKILL, 30.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def interesting(check: Path, filename: str, data: bytes, where: Path) -> bool:
    """Whether `data`, as `filename` in a fresh directory, passes the check (exit 0)."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    (where / filename).write_bytes(data)
    done = subprocess.run([str(check)], cwd=where, capture_output=True, timeout=600)
    return done.returncode == 0


def measure(setup: Setup, tool: Tool, inp: Input, check: Path, root: Path) -> Row:
    run_dir = root / tool.name
    run = Run(run_dir, inp, check, run_dir / "wrapper.sh", run_dir / "counter")
    run.work.mkdir(parents=True)
    run.file.write_bytes(inp.data)
    run.counter.touch()
    run.wrapper.write_text(
        f'#!/bin/sh\necho >> {shlex.quote(str(run.counter))}\nexec {shlex.quote(str(check))} "$@"\n'
    )
    run.wrapper.chmod(0o755)
    launch = tool.launch(setup, run)
    jobs = setup.jobs if tool.parallel else 1
    mark = uuid.uuid4().hex
    tmp = run_dir / "tmp"
    tmp.mkdir()
    env = {**os.environ, **launch.env, MARK: mark, "TMPDIR": str(tmp)}
    start = time.monotonic()
    with (run_dir / "log.txt").open("wb") as log:
        process = subprocess.Popen(
            launch.argv,
            cwd=launch.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout=setup.time_limit)
            stopped = False
        except subprocess.TimeoutExpired:
            _stop(process)
            stopped = True
    wall = time.monotonic() - start
    _sweep(mark)
    tests = len(run.counter.read_bytes().splitlines())
    ended = "time limit" if stopped else "done" if code == 0 else f"exit {code}"
    if tests == 0:
        ended += ", ran no test"
    if said := launch.said():
        ended += f" ({said})"
    out = launch.result(stopped)
    if out is None or not out.exists():
        return Row(tool.name, jobs, None, None, tests, wall, ended, "—")
    data = out.read_bytes()
    ok = interesting(check, inp.filename, data, run_dir / "verify")
    verdict = "yes" if ok else "wrong"
    return Row(tool.name, jobs, len(data), tokens(data), tests, wall, ended, verdict, data)


# -- the report ---------------------------------------------------------------------------------


@dataclass
class Outcome:
    inp: Input
    seed_ok: bool
    rows: list[Row] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # tool: why


def table(outcome: Outcome) -> str:
    inp = outcome.inp
    lines = [
        f"### {inp.name}: `{inp.filename}`, {len(inp.data):,} bytes, {tokens(inp.data):,} tokens",
        "",
        f"Interesting: {inp.about}.",
        "",
        "| tool | jobs | bytes | tokens | tests | wall s | ended | interesting |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in outcome.rows:
        size = "—" if r.bytes is None else f"{r.bytes:,}"
        count = "—" if r.tokens is None else f"{r.tokens:,}"
        lines.append(
            f"| {r.tool} | {r.jobs} | {size} | {count} | {r.tests:,} | {r.wall:.1f} | {r.ended} | "
            f"{r.interesting} |"
        )
    lines += [f"| {tool} | | skipped: {why} | | | | | |" for tool, why in outcome.skipped.items()]
    return "\n".join([*lines, "", verdict(outcome)])


def _kept(outcome: Outcome) -> list[Row]:
    """The rows with a result that is still interesting."""
    return [r for r in outcome.rows if r.tokens is not None and r.interesting == "yes"]


def _smallest(outcome: Outcome) -> int | None:
    return min((r.tokens for r in _kept(outcome) if r.tokens is not None), default=None)


def _beats(outcome: Outcome) -> tuple[bool, bool]:
    """Whether ddchange's result is as small in tokens as the smallest of all, and whether it
    took fewer tests than every other tool whose result is that small."""
    ours = next((r for r in _kept(outcome) if r.tool == "ddchange"), None)
    smallest = _smallest(outcome)
    if ours is None or smallest is None or ours.tokens != smallest:
        return False, False
    rivals = [r for r in _kept(outcome) if r.tool != "ddchange" and r.tokens == smallest]
    return True, all(ours.tests < r.tests for r in rivals)


def verdict(outcome: Outcome) -> str:
    """The input's line of comparison, from its table."""
    ours = next((r for r in _kept(outcome) if r.tool == "ddchange"), None)
    if ours is None or ours.tokens is None:
        return "ddchange left no interesting result."
    smaller = [r for r in _kept(outcome) if r.tokens is not None and r.tokens < ours.tokens]
    cheaper = [
        r for r in _kept(outcome)
        if r.tool != "ddchange" and r.tokens == ours.tokens and r.tests <= ours.tests
    ]  # fmt: skip
    said = [f"ddchange: {ours.tokens:,} tokens in {ours.tests:,} tests."]
    if smaller:
        said.append(
            "Smaller in tokens: "
            + "; ".join(
                f"{r.tool} ({r.tokens:,} in {r.tests:,} tests: "
                f"{why(ours.result, r.result, outcome.inp.data)})"
                for r in smaller
            )
            + "."
        )
    else:
        said.append("No tool's result has fewer tokens.")
    if cheaper:
        said.append(
            "As few tokens in no more tests: "
            + ", ".join(f"{r.tool} ({r.tests:,})" for r in cheaper)
            + "."
        )
    return " ".join(said)


def why(ours: bytes, theirs: bytes, original: bytes) -> str:
    """What a smaller result has that ddchange's lacks, read from the two results: words that
    the input does not have (a rewrite: two of its words joined, a rename, a shorter literal),
    else the tokens ddchange kept and it took out (a deletion ddchange's passes did not find)."""
    words = re.compile(rb"[\w\x80-\xff]+")
    have = set(words.findall(original))
    new = sorted({w for w in words.findall(theirs) if w not in have})
    if new:
        joined = all(any(w[:i] in have and w[i:] in have for i in range(1, len(w))) for w in new)
        kind = "it joined two of the input's words" if joined else "it wrote words the input lacks"
        return f"{kind}: {_shown(new)}"
    kept = sorted((Counter(TOKEN.findall(ours)) - Counter(TOKEN.findall(theirs))).elements())
    return f"it took out tokens ddchange kept: {_shown(kept)}"


def _shown(found: list[bytes]) -> str:
    return ", ".join(f"`{w.decode(errors='replace')}`" for w in found[:5]) + (
        ", ..." if len(found) > 5 else ""
    )


def overall(outcomes: list[Outcome]) -> str:
    """How many inputs ddchange's result was the smallest on, and in fewer tests."""
    ran = [o for o in outcomes if o.seed_ok and o.rows]
    beats = [_beats(o) for o in ran]
    return (
        f"Over the {len(ran)} inputs: ddchange's result is the smallest in tokens (or ties) on "
        f"{sum(small for small, _ in beats)}, and on {sum(fewer for _, fewer in beats)} of "
        "those it took fewer tests than every other tool with a result that small."
    )


def body(
    setup: Setup,
    versions: dict[str, str],
    absent: dict[str, str],
    outcomes: list[Outcome],
    unusable: dict[str, str],
) -> str:
    command = shlex.join([".venv/bin/python", "benchmarks/reduce_peers.py", *sys.argv[1:]])
    python = _out([str(setup.python), "-c", "import platform; print(platform.python_version())"])
    gcc = _out(["gcc", "--version"]).splitlines()[:1]
    head = (
        f"One run on {platform.machine()}, {os.cpu_count()} cores, {platform.system()}: "
        f"`{command}`. Time limit {setup.time_limit:g} s of wall clock per tool and input "
        f"(then SIGINT to its process group, as Ctrl-C; SIGTERM, then SIGKILL, {GRACE:g} s "
        "apart; what it had written so far is its result), "
        f"{setup.jobs} jobs where the tool runs tests in parallel, one tool at a time. Every "
        "tool runs the same check (a shell script, exit 0 = interesting) through a wrapper "
        "that counts its runs: `tests`. `tokens`: runs of word characters (or bytes ≥ 0x80) "
        "and each other non-space character, white space not counted. `interesting`: this "
        "script ran the check again on the result (`wrong`: it is not interesting; `—`: the "
        "tool left no result, as picire and picireny do when stopped before their end). "
        f"The checks' Python: {setup.python} ({python})" + (f"; gcc: {gcc[0]}." if gcc else ".")
    )
    parts = [head, "", "Tools, and how each ran:", ""]
    for name, version in versions.items():
        parts.append(f"- {name}: {version}; {HOW[name]}")
    for name, why in absent.items():
        parts.append(f"- {name}: not run: {why}")
    for name, why in unusable.items():
        parts.append(f"- input {name}: not run: {why}")
    parts += ["", overall(outcomes)]
    for outcome in outcomes:
        parts += ["", table(outcome)]
        if not outcome.seed_ok:
            parts += ["", "The original input was not interesting: no tool ran on it."]
    return "\n".join(parts)


# -- main ---------------------------------------------------------------------------------------


def _ddchange(parser: argparse.ArgumentParser, given: Path) -> Path:
    command = given / ".venv" / "bin" / "ddchange" if given.is_dir() else given
    if not command.is_file():
        parser.error(f"--ddchange {given}: no such checkout or command")
    return command.absolute()


def _names(parser: argparse.ArgumentParser, given: str | None, known: list[str]) -> list[str]:
    if given is None:
        return known
    names = [n for n in given.split(",") if n]
    unknown = sorted(set(names) - set(known))
    if unknown:
        parser.error(f"unknown: {', '.join(unknown)} (known: {', '.join(known)})")
    return [n for n in known if n in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--jobs", type=int, default=2, help="for the tools that have them")
    parser.add_argument(
        "--inputs",
        help=f"comma-separated, of: {','.join(ALL_INPUTS)} (default: {','.join(DEFAULT)})",
    )
    parser.add_argument("--tools", help=f"comma-separated, of: {','.join(TOOLS)}")
    parser.add_argument("--peers-venv", type=Path, default=Path("/work/peers-venv"))
    parser.add_argument(
        "--ddchange",
        type=Path,
        default=Path(sys.executable).with_name("ddchange"),
        help="the ddchange to measure: the command, or a checkout (its .venv/bin/ddchange)",
    )
    parser.add_argument(
        "--python",
        type=Path,
        default=Path(os.path.realpath(sys.executable)),
        help="the Python of the checks (default: the real interpreter behind this one)",
    )
    parser.add_argument("--results", type=Path, default=RESULTS, help="file to write")
    parser.add_argument("--work", type=Path, help="keep every run's files here (default: none)")
    args = parser.parse_args()
    inputs = _names(parser, args.inputs or ",".join(DEFAULT), list(ALL_INPUTS))
    tools = _names(parser, args.tools, list(TOOLS))
    ddchange = _ddchange(parser, args.ddchange)
    stamped = results.stamp_of(results.command_checkout(ddchange))

    with tempfile.TemporaryDirectory(prefix="reduce-peers-") as tmp:
        work = args.work.resolve() if args.work else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        setup = Setup(
            ddchange, args.peers_venv.absolute(), args.python, args.time_limit, args.jobs, work
        )
        versions: dict[str, str] = {}
        absent: dict[str, str] = {}
        for name in tools:
            try:
                versions[name] = TOOLS[name].version(setup)
            except Unavailable as why:
                absent[name] = str(why)
                print(f"skip {name}: {why}", file=sys.stderr)
        outcomes: list[Outcome] = []
        unusable: dict[str, str] = {}
        for name in inputs:
            try:
                inp = ALL_INPUTS[name](setup)
            except Unavailable as why:
                unusable[name] = str(why)
                print(f"skip input {name}: {why}", file=sys.stderr)
                continue
            root = work / name
            shutil.rmtree(root, ignore_errors=True)
            (root / "input").mkdir(parents=True)
            for helper, text in inp.helpers.items():
                (root / "input" / helper).write_text(text)
            check = root / "input" / "check.sh"
            script = inp.check.replace("@PY@", shlex.quote(str(setup.python)))
            check.write_text(
                "#!/bin/sh\n" + script.replace("@HERE@", shlex.quote(str(root / "input"))) + "\n"
            )
            check.chmod(0o755)
            seed_ok = interesting(check, inp.filename, inp.data, root / "original")
            outcome = Outcome(inp, seed_ok)
            outcomes.append(outcome)
            if not seed_ok:
                print(f"input {name}: the original is not interesting", file=sys.stderr)
                continue
            for tool_name in versions:
                tool = TOOLS[tool_name]
                try:
                    row = measure(setup, tool, inp, check, root)
                except Unavailable as why:
                    outcome.skipped[tool_name] = str(why)
                    continue
                outcome.rows.append(row)
                print(f"{name} {row}", file=sys.stderr, flush=True)
        text = body(setup, versions, absent, outcomes, unusable)
    print(text)
    write_section(HEADING, text, args.results, stamped)


if __name__ == "__main__":
    main()
