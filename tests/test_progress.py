"""Progress like git bisect's: the test in flight, the counts, an estimate of the tests left,
and a short summary with the command that resumes when the run is stopped.

The display is tested through its plain form (what a pipe or a CI log gets) and through the
tally it keeps; the live form draws the same tally.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from endtoend import ddchange, interrupted_after, two_commits

from ddchange import samples, suite
from ddchange.cli.display import Tally
from ddchange.events import estimate, triage_estimate
from ddchange.model import Estimate, Outcome, Progress, Running, Source

LINE = re.compile(
    r"^test +(\d+) +([\w-]+): .* -> (PASS|FAIL|UNRESOLVED) .*  · (\d+) run, (\d+) cached, "
    r"(\d+) implied, (\d+) unresolved; about (\d+) tests? left "
    r"\((?:(\d+)-(\d+), 8 times in 10|estimate)\)$"
)


def test_the_plain_form_gives_one_line_per_test_with_counts_and_an_estimate(
    tmp_path: Path,
) -> None:
    files = {f"f{n}.txt": f"{n}\n" for n in range(12)}
    bad = {**{k: v + "more\n" for k, v in files.items()}, "a.txt": "BROKEN\n"}
    test = "grep -q BROKEN a.txt && exit 1; exit 0\n"
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n", **files}, bad, test)
    run = ddchange(repo.path, "good..bad", "--", "sh", "test.sh")
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("test")]
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    numbers = [int(m.group(1)) for m in parsed if m]
    assert numbers == list(range(1, run.report["tests_run"] + 1)), "one line per real test"
    last = parsed[-1]
    assert last is not None
    assert int(last.group(4)) == run.report["tests_run"]
    assert int(last.group(5)) == run.report["cache_hits"]
    assert int(last.group(6)) == run.report["implied"]
    assert int(last.group(8)) <= 1, "at the end, about nothing is left"
    estimates = [int(m.group(8)) for m in parsed if m]
    assert estimates[0] >= run.report["tests_run"] // 2, "the first estimate is no wild guess"
    ranges = [[int(m.group(n)) for n in (9, 8, 10)] for m in parsed if m and m.group(9)]
    assert ranges, "the search's guess comes with its range"
    assert all(low <= likely <= high for low, likely, high in ranges)


def _progress(outcome: Outcome, source: Source, tests: int, left: int) -> Progress:
    return Progress(
        phase="hunk",
        outcome=outcome,
        source=source,
        reason="exit 1",
        size=3,
        remaining=3,
        tests_run=tests,
        commit="",
        left=Estimate(fixed=left),
    )


def test_the_status_shows_the_test_in_flight_and_how_long_it_has_run() -> None:
    tally = Tally()
    # Before the first event nothing is known: no "about 0 tests left".
    assert tally.status(now=0.0) == "reading the changes and setting up the scratch tree"
    tally.add(
        Running(phase="hunk", size=5, number=13, started=100.0, left=Estimate(fixed=4, search=5))
    )
    assert tally.status(now=112.4) == (
        "test 13 running 12s (hunk: 5 changes) · 0 run, 0 cached, 0 implied, 0 unresolved; "
        "about 9 tests left (5-39, 8 times in 10)"
    )
    tally.add(_progress(Outcome.UNRESOLVED, Source.TEST, 13, 8))
    tally.add(_progress(Outcome.PASS, Source.CACHE, 13, 8))
    tally.add(_progress(Outcome.PASS, Source.IMPLIED, 13, 7))
    assert tally.status(now=200.0) == (
        "13 run, 1 cached, 1 implied, 1 unresolved; about 7 tests left (estimate)"
    )
    tally.add(Running(phase="bisect", size=1, number=14, started=0.0, commit="0123456789abcdef"))
    assert tally.status(now=3.0).startswith("test 14 running 3s (bisect: commit 0123456) · ")


def _interrupted_after(tests: int, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """A run over 300 changed files with a slow test, sent SIGINT after `tests` tests."""
    files = {f"d{n % 10}/f{n}.txt": f"line {n}\n" for n in range(300)}
    bad = {**{k: v + "more\n" for k, v in files.items()}, "a.txt": "BROKEN\n"}
    test = "sleep 0.3; grep -q BROKEN a.txt && exit 1; exit 0\n"
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n", **files}, bad, test)
    command = [sys.executable, "-m", "ddchange", "good..bad", "--", "sh", "test.sh"]
    return interrupted_after(command, repo.path, tests)


def test_ctrl_c_gives_a_short_summary_and_the_command_that_resumes(tmp_path: Path) -> None:
    """Stopped in the search, the summary names the first changes of the best answer so far
    and the command to run again, not 300 diffs."""
    done = _interrupted_after(3, tmp_path)  # the pre-flight's 2, then the search
    assert done.returncode == 130
    assert done.stdout.startswith("ddchange: interrupted. Best answer so far: ")
    assert "… " in done.stdout, "the rest of a big answer is counted, not printed"
    assert len(done.stdout.splitlines()) <= 20
    resume = done.stdout.splitlines()[-1]
    assert resume.startswith("To resume, run the same command again here: ddchange ")
    assert resume.endswith("good..bad -- sh test.sh")


def test_ctrl_c_lists_the_best_answer_by_the_changes_it_counts(tmp_path: Path) -> None:
    """At block granularity a change is a block: each file's two new lines are one change,
    and the summary lists as many changes as it counts (it listed each line change)."""
    files = {f"f{n}.txt": "one\ntwo\n" for n in range(4)}
    bad = dict.fromkeys(files, "one\nNEW\nNEWER\ntwo\n") | {"a.txt": "BROKEN\n"}
    test = "sleep 0.3; grep -q BROKEN a.txt && exit 1; exit 0\n"
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n", **files}, bad, test)
    command = [sys.executable, "-m", "ddchange", "good..bad", "--strategy", "diff", "--",
               "sh", "test.sh"]  # fmt: skip
    done = interrupted_after(command, repo.path, 3)  # the pre-flight's 2, then the search
    assert done.returncode == 130
    counted = re.search(
        r"Best answer so far: (\d+) changes \((\d+) of \d+ line changes\)", done.stdout
    )
    assert counted is not None, done.stdout
    assert int(counted[1]) < int(counted[2]), "some change of the answer is a block of two lines"
    listed = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert len(listed) == int(counted[1]), done.stdout


def test_ctrl_c_in_the_pre_flight_also_says_how_to_resume(tmp_path: Path) -> None:
    done = _interrupted_after(1, tmp_path)
    assert done.returncode == 130
    [said] = [line for line in done.stderr.splitlines() if not line.startswith("test")]
    assert said.startswith(
        "ddchange: interrupted before an answer could be reported; your repository is "
    )
    assert said.endswith("run the same command again here: ddchange good..bad -- sh test.sh")


def test_the_command_is_shown_as_it_would_be_typed(tmp_path: Path) -> None:
    test = "grep -q BROKEN a.txt && exit 1; exit 0\n"
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, test)
    run = ddchange(repo.path, "good..bad", "--", "sh", "-c", "sh test.sh")
    assert run.returncode == 0, run.stderr
    assert "makes `sh -c 'sh test.sh'` fail" in run.stdout


def test_the_estimate_is_the_checks_to_come_plus_a_guess_that_falls_as_the_search_closes_in() -> (
    None
):
    """Before the search: the pre-flight's runs not made yet, the checks at the end, and what
    one cause would take over all the changes. In the search: the geometric mean of as many
    tests again as it ran (scaled by the changes in play, on a log scale) and as many again as
    it ran at this level for each level to come; it falls as the changes in play shrink and as
    the levels pass. In the checks at the end: only the reruns not made yet."""
    first = estimate([], "good", 1024, 1024, preflight=1, ends=4)
    assert (first.fixed, first.search) == (6, 16)  # 2 + 4; 1.5 per halving of 1024, + 1
    searched = ["good", "bad", *["hunk"] * 30]
    later = estimate(searched, "hunk", 16, 1024, preflight=1, ends=4)
    # whole: 31 * log2(17) / log2(1025) = 12.67; level: 31 * (hunk, block, the check) = 93
    assert (later.fixed, later.search) == (4, 35)
    assert (later.low, later.likely, later.high) == (4 + 5, 4 + 35, 4 + 245)
    wider = estimate(searched, "hunk", 300, 1024, preflight=1, ends=4)
    assert wider.search > later.search, "more changes in play: more tests left"
    checking = estimate([*searched, *["block"] * 5, *["verify"] * 3], "verify", 4, 1024,
                        preflight=1, ends=4)  # fmt: skip
    assert checking.search < later.search, "falls as the levels pass"
    ending = estimate([*searched, "confirm"], "confirm", 1, 1024, preflight=1, ends=4)
    assert (ending.fixed, ending.search, ending.likely) == (3, 0, 3)


def test_a_triage_estimates_the_running_search_the_targets_to_come_and_the_reruns() -> None:
    """The running target's search as guessed, each target to come at the median of the
    finished ones (the running one's guess while none has finished), and 3 reruns of each
    answer so far and of one more."""
    first = triage_estimate(10, [], 3, None, 0, 3)  # 4 targets, the first just begun
    assert first == Estimate(fixed=3, search=10 + 3 * 10)
    later = triage_estimate(10, [12, 0, 2], 1, None, 2, 3)
    assert later == Estimate(fixed=9, search=10 + 1 * 2)
    last = triage_estimate(4, [12, 0, 2], 0, None, 2, 3)
    assert last == Estimate(fixed=9, search=4)


def test_with_the_history_first_each_first_bad_commit_to_come_costs_a_search() -> None:
    """12 targets bisected to 3 first bad commits: while the first searches, the two commits
    to come cost one search each and the 9 other targets nothing; later, a commit to come
    costs what the searches that ran tests ran, the other targets their median."""
    first = triage_estimate(8, [], 11, 2, 0, 3)
    assert first == Estimate(fixed=3, search=8 + 2 * 8)
    later = triage_estimate(5, [6, 0, 0, 4], 8, 1, 1, 3)
    assert later == Estimate(fixed=6, search=5 + 1 * 6 + 7 * 0)


def test_a_triage_shows_its_estimate_on_each_line_of_a_search(tmp_path: Path) -> None:
    """Each line of a target's search says which target, the answers so far, and about how
    many tests are left, said to be a guess."""
    from test_suite_triage import JUNIT
    from test_suite_triage import repository as suite_repository

    repo = suite_repository(tmp_path / "repo")
    report = str(tmp_path / "t.json")
    run = ddchange(repo.path, "good..bad", *JUNIT, "--json", report, "--", "python3", "suite.py",
                   command=["run"])  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if "target " in line]
    assert lines
    assert all(re.search(r"about \d+ tests? left \(\d+-\d+, a guess", line) for line in lines)


def test_a_triage_inside_the_history_numbers_on_and_counts_every_target(tmp_path: Path) -> None:
    """With the history first, the searches inside each first bad commit go on numbering the
    runs from the bisection's, as the log does; "target K of N" counts every failing test of
    the run; and the reruns of a commit's causes, once made, are not in the guess made inside
    the next commit: on the bundled suite the guess at its last search is at most 12."""
    scenario = samples.load("suite-triage")
    told: list[tuple[int, str]] = []
    result = suite.run(
        samples.request(scenario, samples.build_repo(scenario, tmp_path / "repo")),
        lambda record, _target, far: told.append((record.number, far)),
    )
    assert [number for number, _ in told] == [record.number for record in result.log]
    searching = [far for _, far in told if far.startswith("target ")]
    assert all(re.match(r"target \d+ of 12,", far) for far in searching)
    assert len({far.split(",")[0] for far in searching}) == 3  # one target of each cause
    last = re.search(r"about (\d+) tests? left", searching[-1])
    assert last is not None
    assert int(last.group(1)) <= 12
