"""`git bisect run` against ddchange's strategies on every bundled sample repository.

    .venv/bin/python benchmarks/triage.py    # rewrites its section of benchmarks/RESULTS.md
    .venv/bin/python benchmarks/triage.py --scenarios merge --results /tmp/r.md   # a quick check

For each scenario, in freshly built repositories (so that no run reuses another's journal):
- `git bisect run` with the scenario's build and test (a failing build or a timeout exits 125,
  "skip", as ddchange counts them UNRESOLVED); the count is the number of test-script runs, one
  of GOOD and one of BAD first among them (git bisect trusts the user that GOOD passes and BAD
  fails, so a user runs both to know), and it names one commit (or a list of candidates when
  skips leave several). It confirms nothing at the end.
- ddchange as `ddchange` runs when no strategy is given ("default": the `run` command's own
  default at run time, named in the table), with `--strategy diff` (ProbDD over the whole
  difference), and with `--isolate`; each count is every real run of build and test, and
  beside it the same runs by part, counted from the run's test log by phase: the pre-flight
  (GOOD and BAD), the search, and the checks at the end (the answer and BAD without it run
  again, and the flaky-test check).
- textbook ddmin over the blocks the default search ends at (run.textbook_ddmin: an exact
  cache, GOOD and BAD run first and counted), the unit-for-unit baseline without history.
"named" says what each could point at: a commit, or changed lines with their commits.
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from results import PARTS, RESULTS, runs, write_section
from run import textbook_ddmin

from ddchange import model, samples, session

HEADING = "## Against `git bisect run` (`benchmarks/triage.py`)"


@dataclasses.dataclass(frozen=True)
class Bisected:
    tests: int  # every run of the script, `trust` among them
    trust: int  # runs of GOOD and of BAD before bisecting
    named: list[str]  # SHAs git bisect named: one, or the candidates skips left


def bisect_run(scenario: samples.Scenario, repo: Path) -> Bisected:
    """`git bisect run` in `repo` (a fresh build of the scenario); its count and its answer."""
    counter = repo.parent / f"{repo.name}.count"
    script = repo.parent / f"{repo.name}.sh"
    test = shlex.join(scenario.test)
    if scenario.timeout:
        test = f"timeout {scenario.timeout:g} {test}; rc=$?; [ $rc = 124 ] && exit 125; exit $rc"
    build = f"{scenario.build} || exit 125" if scenario.build else "true"
    script.write_text(f"echo x >> {shlex.quote(str(counter))}\n{build}\n{test}\n")
    git = ["git", "-C", str(repo)]
    for rev in (scenario.good, scenario.bad):
        subprocess.run([*git, "checkout", "-q", rev], check=True, capture_output=True)
        subprocess.run(["sh", str(script)], cwd=repo, capture_output=True)
    trust = len(counter.read_text().splitlines())
    subprocess.run(
        [*git, "bisect", "start", scenario.bad, scenario.good], check=True, capture_output=True
    )
    done = subprocess.run(
        [*git, "bisect", "run", "sh", str(script)], capture_output=True, text=True
    )
    subprocess.run([*git, "bisect", "reset"], check=True, capture_output=True)
    tests = len(counter.read_text().splitlines()) if counter.exists() else 0
    first = re.findall(r"^([0-9a-f]{40}) is the first bad commit", done.stdout, re.MULTILINE)
    candidates = re.findall(r"^([0-9a-f]{40})$", done.stdout, re.MULTILINE)
    return Bisected(tests, trust, first or candidates)


def ddchange(scenario: samples.Scenario, repo: Path, **options: object) -> model.Result:
    """One ddchange search over `repo` (a fresh build of `scenario`), with `options`."""
    request = dataclasses.replace(samples.request(scenario, repo), **options)  # type: ignore[arg-type]
    return session.run(request)


def default_strategy() -> model.Strategy:
    """The strategy `ddchange` runs when none is given (and no --results): a search's own
    default, as the request has it."""
    field = next(f for f in dataclasses.fields(model.Request) if f.name == "strategy")
    return model.Strategy(field.default)


def route(result: model.Result) -> str:
    """How a search went about the range: for `auto`, its bisection's tests and what it
    searched; for the others, the strategy alone."""
    if result.route.strategy is not model.Strategy.AUTO:
        return str(result.route.strategy)
    return f"auto: {result.route.bisect_tests} bisect + {result.route.searched}"


def tests(result: model.Result) -> str:
    """All runs, and the same by part (pre-flight / search / checks)."""
    return f"{result.tests_run} ({runs(r.phase for r in result.log).cell()})"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def culprit_commits(result: model.Result) -> set[str]:
    return {info.sha for h in result.culprits for info in result.attribution.get(h.id, ())}


def what_bisect_named(repo: Path, named: list[str], culprits: set[str]) -> str:
    """The commit(s) git bisect named, and how they relate to the commits of the real culprits."""
    shown = ", ".join(sha[:7] for sha in named)
    if len(named) != 1:
        return f"{shown}: {len(named)} candidates"
    if {named[0]} == culprits:
        return f"{shown}: the culprit commit"
    if len(git(repo, "rev-list", "--parents", "-1", named[0]).split()) > 2:
        return f"{shown}: the merge, not the {len(culprits)} culprit commits"
    if named[0] in culprits:
        return f"{shown}: 1 of the {len(culprits)} culprit commits"
    return f"{shown}: not a culprit commit"


def long_history(dest: Path, commits: int, culprit: int) -> Path:
    """A repository of `commits` commits after GOOD: commit k rewrites function f_k of a small
    Python package into an equivalent form, except commit `culprit`, whose rewrite is off by
    one. GOOD and BAD are tags; `sh test.sh` checks the sum of all functions."""
    files = 8
    dest.mkdir(parents=True)
    samples.init_repo(dest)

    def write(changed: int) -> None:
        for n in range(files):
            body = []
            for k in range(n, commits, files):
                new = "        total = k_ + x\n        return total\n"
                wrong = "        total = k_ + x + 1\n        return total\n"
                rewrite = wrong if k == culprit else new
                inner = (
                    rewrite.replace("k_", str(k)) if k <= changed else f"        return x + {k}\n"
                )
                body.append(f"def f_{k}(x):\n    if x >= 0:\n{inner}    return x + {k}\n\n\n")
            (dest / f"mod{n}.py").write_text("".join(body))

    total = sum(1 + k for k in range(commits))
    imports = "".join(f"import mod{n}\n" for n in range(files))
    calls = " + ".join(f"mod{k % files}.f_{k}(1)" for k in range(commits))
    (dest / "check.py").write_text(f"{imports}\nraise SystemExit(({calls}) != {total})\n")
    (dest / "test.sh").write_text("python3 -B check.py\n")
    write(-1)
    samples.commit_all(dest, "GOOD", "Ada <ada@example.org>", 0)
    git(dest, "tag", "GOOD")
    for k in range(commits):
        write(k)
        samples.commit_all(dest, f"rewrite f_{k}", "Ada <ada@example.org>", k + 1)
    git(dest, "tag", "BAD")
    return dest


LONG_NAME = "long"  # its --scenarios name
LONG = samples.Scenario(
    name="64 commits (synthetic)",
    description="one wrong line in commit 41 of 64",
    good="GOOD",
    bad="BAD",
    test=("sh", "test.sh"),
    build=None,
    timeout=None,
    expected=(samples.Expected("mod1.py", "+        total = 41 + x + 1"),),
    source=Path("."),
    commits=(),
)


def long_row(workdir: Path) -> list[str]:
    """The synthetic long history's line of the table (built by `long_history`)."""

    def build(dest: Path) -> Path:
        return long_history(dest, commits=64, culprit=41)

    return row(LONG, workdir, build)


def row(
    scenario: samples.Scenario,
    workdir: Path,
    build: Callable[[Path], Path] | None = None,
) -> list[str]:
    """The scenario's line of the table."""
    make = build or (lambda dest: samples.build_repo(scenario, dest))
    repo = make(workdir / f"{scenario.name}-bisect")
    bisected = bisect_run(scenario, repo)
    default = ddchange(
        scenario, make(workdir / f"{scenario.name}-default"), strategy=default_strategy()
    )
    diff = ddchange(scenario, make(workdir / f"{scenario.name}-diff"), strategy="diff")
    isolated = ddchange(scenario, make(workdir / f"{scenario.name}-isolate"), isolate=True)
    blocks, kept = textbook_ddmin(scenario, make(workdir / f"{scenario.name}-blocks"), "block")
    commits = culprit_commits(default)
    whole = culprit_commits(diff)  # the whole cause's commits, which git bisect is held to
    expected = all(
        samples.matches(scenario, samples.answer(r), inside=r.route.inside) for r in (default, diff)
    )
    between = f"{scenario.good}..{scenario.bad}"
    first_parent = git(repo, "rev-list", "--first-parent", between).split()
    every = git(repo, "rev-list", between).split()
    return [
        scenario.name,
        f"{len(first_parent)} / {len(every)}",
        str(len(diff.diff.hunks)),
        f"{bisected.tests} ({bisected.trust} + {bisected.tests - bisected.trust})",
        what_bisect_named(repo, bisected.named, whole),
        tests(default),
        route(default),
        tests(diff),
        tests(isolated),
        f"{len(isolated.culprits)} (+{len(isolated.passing)})",
        f"{blocks} ({kept} blocks)",
        f"{len(default.culprits)} change(s) from {', '.join(sorted(c[:7] for c in commits))}",
        "yes" if expected else "NO",
    ]


COLUMNS = (
    "scenario",
    "commits (first-parent / all)",
    "changes",
    "git bisect run: tests (GOOD and BAD + bisect)",
    "git bisect names",
    f"default: tests ({PARTS})",
    "default: route",
    f"--strategy diff: tests ({PARTS})",
    f"--isolate: tests ({PARTS})",
    "--isolate: difference (+passing)",
    "textbook ddmin, blocks: tests (answer)",
    "ddchange default names",
    "expected answer?",
)


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    names = [s.name for s in samples.scenarios() if not s.causes]
    parser.add_argument(
        "--scenarios",
        help=f"comma-separated, of: {', '.join(names)}, {LONG_NAME} (default: all)",
    )
    parser.add_argument("--results", type=Path, default=RESULTS, help="file to write")
    args = parser.parse_args(argv)
    args.scenarios = args.scenarios.split(",") if args.scenarios else [*names, LONG_NAME]
    unknown = set(args.scenarios) - {*names, LONG_NAME}
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    with tempfile.TemporaryDirectory(prefix="ddchange-triage-") as tmp:
        rows = [
            row(scenario, Path(tmp))
            for scenario in samples.scenarios()
            if scenario.name in args.scenarios
        ]
        if LONG_NAME in args.scenarios:
            rows.append(long_row(Path(tmp)))
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    command = shlex.join(["benchmarks/triage.py", *(argv if argv is not None else sys.argv[1:])])
    write_section(
        HEADING,
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, git {git(Path('.'), '--version').split()[-1]}: "
        f"`.venv/bin/python {command}`; the default strategy was `{default_strategy()}`. "
        + (__doc__ or "").split("\n\n", 2)[2].strip()
        + "\n\n"
        + text,
        args.results,
    )


if __name__ == "__main__":
    main()
