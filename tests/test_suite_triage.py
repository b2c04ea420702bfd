"""Whole-suite triage (--results): every failing test attributed to its own cause from shared
runs, each claim a record of that test, and results that are missing or hostile never taken
for a pass. Real git, real runs of a small suite that writes JUnit XML or TAP."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from endtoend import LINES, ddchange, edit, interrupted_after, put, refused, two_commits
from gitsandbox import Sandbox, checkout_state, init

from ddchange import samples, suite

# A suite of five tests over the repository's files, written as JUnit XML (or TAP with
# `tap`): each test fails when its condition on the files holds. A marker file makes the run
# write a hostile or broken result file, as a run can.
SUITE = r"""
import os, sys
def has(path, text):
    return os.path.exists(path) and text in open(path).read()
tests = {
    "suite.Money.test_round": not has("a.txt", "BROKEN"),
    "suite.Money.test_sum": not has("a.txt", "BROKEN"),
    "suite.Text.test_encoding": not (has("b.txt", "latin") and has("c.txt", "ENCODING")),
    "suite.Old.test_known_bug": False,
    "suite.Old.test_fixed": has("d.txt", "fixed"),
}
if has("e.txt", "BOMB"):
    open("report.xml", "w").write(
        '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><testsuite>&b;</testsuite>')
    sys.exit(1)
if has("e.txt", "TRUNCATED"):
    open("report.xml", "w").write('<?xml version="1.0"?><testsuite><testcase classname')
    sys.exit(1)
if "tap" in sys.argv:
    print("1..%d" % len(tests))
    for n, (name, ok) in enumerate(tests.items(), 1):
        print(("ok" if ok else "not ok") + " %d - %s" % (n, name))
    sys.exit(0 if all(tests.values()) else 1)
out = ['<?xml version="1.0"?>', '<testsuite name="suite">']
for name, ok in tests.items():
    classname, _, method = name.rpartition(".")
    body = "" if ok else '<failure type="AssertionError" message="no"/>'
    out.append('<testcase classname="%s" name="%s">%s</testcase>' % (classname, method, body))
out.append("</testsuite>")
open("report.xml", "w").write("\n".join(out))
sys.exit(0 if all(tests.values()) else 1)
"""

GOOD = {
    "suite.py": SUITE,
    "a.txt": LINES,
    "b.txt": LINES,
    "c.txt": LINES,
    "d.txt": LINES,
    "e.txt": LINES,
}
BAD = {
    "a.txt": edit(LINES, ("line 2\n", "line two\n"), ("line 20\n", "BROKEN\n")),
    "b.txt": edit(LINES, ("line 7\n", "latin\n"), ("line 30\n", "line thirty\n")),
    "c.txt": edit(LINES, ("line 1\n", "ENCODING\n"), ("line 12\n", "line twelve\n")),
    "d.txt": edit(LINES, ("line 9\n", "fixed\n")),
}
JUNIT = ("--results", "junit:report.xml")


def repository(path: Path, bad: dict[str, str] | None = None) -> Sandbox:
    return two_commits(path, GOOD, {**BAD, **(bad or {})}, "")


def triage(
    repo: Sandbox, *options: str, tap: bool = False, revisions: str = "good..bad"
) -> tuple[int, str, str, dict]:
    """`ddchange run --results ... --json FILE` on `repo`: exit code, stdout, stderr, report."""
    report = repo.path.parent / "triage.json"
    command = ["--", "python3", "suite.py", *(["tap"] if tap else [])]
    run = ddchange(repo.path, revisions, "--json", str(report), *options, *command, command=["run"])
    document = json.loads(report.read_text()) if report.exists() else {}
    report.unlink(missing_ok=True)
    return run.returncode, run.stdout, run.stderr, document


def cause_lines(document: dict) -> dict[tuple[str, ...], set[str]]:
    """Each cause's tests, with the lines its changes add."""
    return {
        tuple(cause["tests"]): {
            line[1:]
            for change in cause["changes"]
            for line in change["diff"].splitlines()
            if line.startswith("+")
        }
        for cause in document["causes"]
    }


def test_each_failing_test_gets_its_own_cause_from_shared_runs(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    page = tmp_path / "triage.html"
    code, out, err, document = triage(
        repo, *JUNIT, "--patch-dir", str(tmp_path / "causes"), "--report", str(page)
    )
    assert code == 0, err
    assert document["outcome"] == "found"
    assert cause_lines(document) == {
        ("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN"},
        ("suite.Text.test_encoding",): {"latin", "ENCODING"},
    }
    assert document["already_failing"] == ["suite.Old.test_known_bug"]
    assert document["newly_passing"] == ["suite.Old.test_fixed"]
    # Every claim is a record: each cause's answer failed for each of its tests in every run.
    log = document["log"]
    for cause in document["causes"]:
        changes = sorted(u["id"] for u in cause["changes"])
        runs = [r for r in log if r["config"] == changes]
        assert len(runs) == cause["runs"] >= 2
        for test in cause["tests"]:
            classname, _, name = test.rpartition(".")
            assert all(r["cases"][test][:2] == ["fail", "AssertionError"] for r in runs), name
    assert "Cause 1: 1 change breaks 2 tests" in out
    assert "Already failing at GOOD (not searched): suite.Old.test_known_bug" in out
    html = page.read_text()
    assert html.count('<h2 id="cause-') == 2
    assert "<li><code>suite.Text.test_encoding</code></li>" in html
    assert '<span class="add">+latin' in html
    # The patches apply on GOOD, and each fails exactly its cause's tests.
    for number, cause in enumerate(document["causes"], 1):
        clone = on_good(repo, tmp_path / f"clone{number}", tmp_path / "causes", number)
        subprocess.run(["python3", "suite.py"], cwd=clone, check=False)
        report = (clone / "report.xml").read_text()
        for test in cause["tests"]:
            method = test.rpartition(".")[2]
            assert f'name="{method}"><failure' in report


def test_a_second_test_of_the_same_cause_costs_no_run(tmp_path: Path) -> None:
    """test_sum has test_round's cause: its search takes test_round's path, every step of
    which a record answers, so the two cost one search."""
    repo = repository(tmp_path / "repo")
    code, _, err, both = triage(repo, *JUNIT, "--test", "suite.Money.*")
    assert code == 0, err
    alone = repository(tmp_path / "alone")
    code, said, err, one = triage(alone, *JUNIT, "--test", "suite.Money.test_round")
    assert code == 0, err
    assert "ddchange: 1 test passes at good (" in said
    assert ") and fails at bad (" in said
    assert len(both["causes"]) == 1
    assert both["tests_run"] == one["tests_run"]


def test_tap_on_the_output_gives_the_same_causes(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    code, _, err, document = triage(repo, "--results", "tap", tap=True)
    assert code == 0, err
    assert cause_lines(document) == {
        ("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN"},
        ("suite.Text.test_encoding",): {"latin", "ENCODING"},
    }


@pytest.mark.parametrize("marker", ["BOMB", "TRUNCATED"])
def test_a_hostile_or_broken_result_file_is_unresolved_never_a_pass(
    tmp_path: Path, marker: str
) -> None:
    """e.txt's marker makes a run write an XML bomb or half a file: those runs are UNRESOLVED
    for every test, so the marker's change is never dropped as if the tests passed without
    it, and the answers stay right."""
    repo = repository(tmp_path / "repo", {"e.txt": edit(LINES, ("line 4\n", f"{marker}\n"))})
    # At BAD itself the results are unreadable: nothing to search, said clearly.
    code, _, err, _ = triage(repo, *JUNIT)
    assert code == 1, err
    assert "BAD's run gave no test results" in err


def test_results_unreadable_in_the_search_are_unresolved(tmp_path: Path) -> None:
    """0.txt's change (first in the diff) makes every run but BAD's write an XML bomb: those
    configurations are UNRESOLVED for every test, never a pass, and the answers stay right."""
    bomb = (
        "import os\n"
        "def _in(path, text):\n"
        "    return text in open(path).read()\n"
        "if _in('0.txt', 'BOMB') and not (_in('a.txt', 'BROKEN') and _in('b.txt', 'latin')\n"
        "        and _in('c.txt', 'ENCODING') and _in('d.txt', 'fixed')):\n"
        "    open('report.xml', 'w').write('<!DOCTYPE l [<!ENTITY a \"a\">]><x>&a;</x>')\n"
        "    raise SystemExit(1)\n"
    )
    good = {**GOOD, "suite.py": bomb + SUITE, "0.txt": LINES}
    repo = two_commits(
        tmp_path / "repo", good, {**BAD, "0.txt": edit(LINES, ("line 6\n", "BOMB\n"))}, ""
    )
    code, _, err, document = triage(repo, *JUNIT)
    assert code == 0, err
    reasons = [r["reason"] for r in document["log"] if r["outcome"] == "unresolved"]
    assert any("no test results" in reason for reason in reasons), reasons
    assert cause_lines(document)[("suite.Money.test_round", "suite.Money.test_sum")] == {"BROKEN"}


def test_a_check_that_could_not_be_tested_is_said_so(tmp_path: Path) -> None:
    """Without its "latin" line, test_encoding's cause leaves a run that writes a truncated
    result file: that check did not fail, and did not pass either; the report says which."""
    broken = (
        "import os\n"
        "def _in(path, text):\n"
        "    return text in open(path).read()\n"
        "if _in('c.txt', 'ENCODING') and not _in('b.txt', 'latin'):\n"
        "    open('report.xml', 'w').write('<?xml version=\"1.0\"?><testsuite><testcase')\n"
        "    raise SystemExit(1)\n"
    )
    repo = two_commits(tmp_path / "repo", {**GOOD, "suite.py": broken + SUITE}, BAD, "")
    code, said, err, document = triage(repo, *JUNIT)
    assert code == 0, err
    by_tests = {tuple(cause["tests"]): cause for cause in document["causes"]}
    encoding = by_tests[("suite.Text.test_encoding",)]
    assert cause_lines(document)[("suite.Text.test_encoding",)] == {"latin", "ENCODING"}
    assert (encoding["checks"], encoding["unresolved_checks"]) == (2, 1)
    assert by_tests[("suite.Money.test_round", "suite.Money.test_sum")]["unresolved_checks"] == 0
    assert "of 2 checks (a change removed in each) 1 passed and 1 could not be tested" in said
    assert "so it is not shown to be 1-minimal" in said


def test_no_results_at_good_is_said_clearly(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    code, _, err, _ = triage(repo, "--results", "junit:elsewhere/*.xml")
    assert code == 1
    assert "GOOD's run gave no test results (no file matches junit:elsewhere/*.xml)" in err


def test_no_test_that_passes_at_good_and_fails_at_bad(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    code, _, err, _ = triage(repo, *JUNIT, "--test", "suite.Old.*")
    assert code == 1
    assert "no test passes at GOOD and fails at BAD among those --test names" in err


def test_a_second_run_takes_every_test_from_the_journal(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    code, _, err, first = triage(repo, *JUNIT)
    assert code == 0, err
    code, _, err, again = triage(repo, *JUNIT)
    assert code == 0, err
    assert again["tests_run"] == 0
    assert again["resumed"] == len(first["log"])
    assert again["causes"] == first["causes"]
    assert again["resumed_from"]["replayed"] is False  # an earlier run, not a log
    assert first["resumed_from"] is None


def test_two_jobs_give_the_same_causes_and_records(tmp_path: Path) -> None:
    """-j 2 runs ahead in a second scratch tree; a run becomes a record only when a search
    asks for it, so the records, and the causes, are those of -j 1."""
    one = triage(repository(tmp_path / "one"), *JUNIT)
    two = triage(repository(tmp_path / "two"), *JUNIT, "-j", "2")
    assert one[0] == two[0] == 0, two[2]
    assert two[3]["causes"] == one[3]["causes"]
    shape = [[(r["phase"], r["config"], r["cases"]) for r in run[3]["log"]] for run in (one, two)]
    assert shape[0] == shape[1]


def test_a_logged_triage_replays_to_the_same_causes(tmp_path: Path) -> None:
    """`ddchange log` keeps each run's test results; `ddchange replay` of that log runs
    nothing again and gives the same causes."""
    repo = repository(tmp_path / "repo")
    code, _, err, first = triage(repo, *JUNIT)
    assert code == 0, err
    log = tmp_path / "triage.log"
    shown = ddchange(repo.path, command=["log"])
    assert '"cases": {' in shown.stdout
    log.write_text(shown.stdout)
    subprocess.run([sys.executable, "-m", "ddchange", "reset"], cwd=repo.path, check=True)
    report = tmp_path / "again.json"
    again = ddchange(repo.path, "--json", str(report), str(log), command=["replay"])
    assert again.returncode == 0, again.stderr
    replayed = json.loads(report.read_text())
    assert replayed["tests_run"] == 0
    assert replayed["causes"] == first["causes"]
    assert replayed["resumed_from"]["replayed"] is True
    assert "taken from the replayed log" in again.stdout
    # The same triage run for real afterwards says its records came from the log, too.
    code, said, err, later = triage(repo, *JUNIT)
    assert code == 0, err
    assert later["resumed_from"]["replayed"] is True
    assert "taken from the replayed log" in said


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--results", "xml:out.xml"), "--results 'xml:out.xml'"),
        (("--results", "junit:"), "--results 'junit:'"),
        (("--test", "x.*"), "--test needs --results"),
    ],
)
def test_usage_errors_take_one_line(tmp_path: Path, options: tuple[str, ...], message: str) -> None:
    repo = repository(tmp_path / "repo")
    run = ddchange(repo.path, "good..bad", *options, "--", "python3", "suite.py", command=["run"])
    refused(run, 2, message)


def test_the_bundled_suite_is_triaged_into_its_three_causes() -> None:
    """`ddchange demo suite-triage`: 12 failing tests, 3 independent causes (one breaks the
    import of a module two tests need); every test attributed to its true cause."""
    done = subprocess.run(
        [sys.executable, "-m", "ddchange", "demo", "suite-triage"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "The causes match the scenario's causes." in done.stdout
    assert "12 tests pass at v3.0" in done.stdout


def test_the_default_triage_goes_inside_each_tests_first_bad_commit(tmp_path: Path) -> None:
    """The default (--strategy auto) bisects the history for each failing test by its own
    verdicts, a commit's run serving every test: each commit's tree is built once, the first
    bad commits too (no test was seen to fail at random: their FAIL is taken as BAD's is).
    Then each cause is searched
    inside its tests' first bad commit, against its parent: its patch applies there and fails
    its tests, and the cause of two commits (05 and 06) is one line of 06 on a parent that has
    05. Fewer tests than the whole range's triage."""
    scenario = samples.load("suite-triage")
    repo = samples.build_repo(scenario, tmp_path / "repo")
    request = samples.request(scenario, repo)
    assert request.strategy == "auto"
    result = suite.run(request)
    assert result.outcome == "found"
    assert samples.causes_match(scenario, result)
    logged = Sandbox(repo).git("log", "--format=%H %s", "v3.0..v3.1").decode()
    subjects = dict(line.split(" ", 1) for line in logged.splitlines())
    first_bad = {
        cause.tests[0]: subjects[changes.first_bad or ""]
        for cause, changes in zip(result.causes, result.changes, strict=True)
    }
    assert first_bad == {
        "tests.test_invoice.InvoiceTest.test_discount_rounds_half_a_cent_up": (
            "money: round half a cent to even, as the bank does; docstrings"
        ),
        "tests.test_invoice.SummaryTest.test_summary": (
            "cli: day-first dates, as our customers in France write them"
        ),
        "tests.test_export.ExportTest.test_header_and_one_row": (
            "terms: net90; drop DEFAULT_TERMS, which nothing in terms.py uses"
        ),
    }
    for changes in result.changes:  # the parent: the patch applies there
        parent = Sandbox(repo).git("rev-parse", f"{changes.first_bad}^").decode().strip()
        assert parent == changes.base
        (tmp_path / "cause.patch").write_bytes(changes.patch)
        Sandbox(repo).git("read-tree", parent)
        Sandbox(repo).git("apply", "--check", "--cached", str(tmp_path / "cause.patch"))
    bisected = [r.config for r in result.log if r.phase == "bisect"]
    tips = {samples_tree(c.first_bad) for c in result.changes}
    assert set(bisected) >= tips
    assert all(bisected.count(c) == 1 for c in set(bisected) - tips)
    # a steady suite: each first bad commit's FAIL is taken as BAD's is, not run again
    assert all(bisected.count(tip) == 1 for tip in tips)
    whole = suite.run(dataclasses.replace(request, strategy="diff"))
    assert samples.causes_match(scenario, whole)
    assert result.tests_run < whole.tests_run


def test_a_triage_from_a_release_off_the_main_line_bisects_from_where_they_forked(
    tmp_path: Path,
) -> None:
    """GOOD a release tag on a maintenance branch (no ancestor of BAD): as `git bisect` does,
    the commit the two forked from is run first, and each failing test's bisection starts
    from it once it passes; the causes are the same as from the main line's own GOOD, and
    each cause's patch applies on a commit of the main line."""
    scenario = samples.load("suite-triage")
    repo = samples.build_repo(scenario, tmp_path / "repo")
    sandbox = Sandbox(repo)
    fork = sandbox.rev("v3.0")
    sandbox.git("checkout", "-q", "-b", "maintenance", "v3.0")
    put(sandbox, {"RELEASE-NOTES": "3.0.1: packaging only\n"})
    sandbox.commit("release 3.0.1")
    sandbox.git("tag", "v3.0.1")
    request = dataclasses.replace(samples.request(scenario, repo), good="v3.0.1")
    result = suite.run(request)
    assert result.outcome == "found"
    assert samples.causes_match(scenario, result)
    assert (result.fork, result.fallback) == (fork, "")
    assert [r.config for r in result.log if r.phase == "bisect"][0] == frozenset({f"commit:{fork}"})
    main_line = sandbox.git("rev-list", "v3.0..v3.1").decode().split()
    assert all(c.first_bad in main_line for c in result.changes)


def test_a_fork_that_fails_some_tests_triages_those_over_the_whole_range(tmp_path: Path) -> None:
    """GOOD a release whose branch left the main line at a commit that broke the Money tests,
    and fixed them: the commit they forked from fails those, so their cause is searched over
    the whole range (and the report says why); the encoding test passes there, so its
    bisection starts from it and its cause lies inside the commit that broke it."""
    repo = init(tmp_path / "repo")
    put(repo, GOOD)
    repo.commit("base")
    put(repo, {"a.txt": BAD["a.txt"]})
    fork = repo.commit("break the money tests")
    for name in ("b.txt", "c.txt", "d.txt"):
        put(repo, {name: BAD[name]})
        repo.commit(f"change {name}")
    repo.git("tag", "bad")
    encoding = repo.rev("HEAD~1")  # c.txt's ENCODING, after b.txt's latin
    repo.git("checkout", "-q", "-b", "maintenance", fork)
    put(repo, {"a.txt": LINES})
    repo.commit("release: the money tests fixed")
    repo.git("tag", "rel")
    repo.git("checkout", "-q", "main")
    code, out, err, document = triage(repo, *JUNIT, revisions="rel..bad")
    assert code == 0, err
    assert document["bisection"]["fork"] == fork
    assert document["bisection"]["fallback"].startswith(
        f"for some failing tests, GOOD is not an ancestor of BAD, and the commit they forked "
        f"from, {fork[:12]}, did not pass"
    )
    first_bad = {tuple(c["tests"]): c["first_bad"] for c in document["causes"]}
    assert first_bad == {
        ("suite.Money.test_round", "suite.Money.test_sum"): None,
        ("suite.Text.test_encoding",): encoding,
    }
    assert cause_lines(document)[("suite.Text.test_encoding",)] == {"ENCODING"}


def test_a_triage_inside_the_history_resumes_and_replays_with_every_run_of_it(
    tmp_path: Path,
) -> None:
    """The bisection and each triage inside a first bad commit are runs of their own in the
    journal: the same command again runs nothing; `ddchange log` prints all of them, and their
    replay after a reset runs nothing and gives the same causes."""
    scenario = samples.load("suite-triage")
    repo = samples.build_repo(scenario, tmp_path / "repo")
    report = tmp_path / "triage.json"
    argv = [
        "v3.0..v3.1", "--timeout", "30", "--results", "junit:report.xml", "--json", str(report),
        "--", *scenario.test,
    ]  # fmt: skip
    first = ddchange(repo, *argv, command=["run"])
    assert first.returncode == 0, first.stderr
    document = json.loads(report.read_text())
    assert {c["first_bad"] is not None for c in document["causes"]} == {True}
    again = ddchange(repo, *argv, command=["run"])
    assert again.returncode == 0, again.stderr
    second = json.loads(report.read_text())
    assert second["tests_run"] == 0
    assert second["resumed"] == document["tests_run"]  # the bisection's runs taken over once
    assert second["causes"] == document["causes"]
    shown = ddchange(repo, command=["log"]).stdout
    assert shown.count("# ddchange log") == 4  # the bisection, then one run per first bad commit
    log = tmp_path / "triage.log"
    log.write_text(shown)
    subprocess.run([sys.executable, "-m", "ddchange", "reset"], cwd=repo, check=True)
    replayed = ddchange(repo, "--json", str(report), str(log), command=["replay"])
    assert replayed.returncode == 0, replayed.stderr
    third = json.loads(report.read_text())
    assert third["tests_run"] == 0
    assert third["causes"] == document["causes"]


def samples_tree(sha: str | None) -> frozenset[str]:
    return frozenset({f"commit:{sha}"})


def test_a_triage_where_good_is_no_ancestor_of_bad_triages_the_whole_range_and_says_why(
    tmp_path: Path,
) -> None:
    repo = repository(tmp_path / "repo")
    sandbox = Sandbox(repo.path)
    sandbox.git("checkout", "-q", "--orphan", "elsewhere", "good")
    sandbox.git("commit", "-q", "-m", "GOOD again, on a history of its own")
    sandbox.git("tag", "good2")
    code, out, err, document = triage(repo, *JUNIT, revisions="good2..bad")
    assert code == 0, err
    assert document["bisection"]["fallback"].startswith("GOOD is not an ancestor of BAD")
    assert "The whole of GOOD..BAD was triaged: GOOD is not an ancestor of BAD" in out
    assert all(cause["first_bad"] is None for cause in document["causes"])


def test_a_cause_fails_its_tests_and_breaks_no_other(tmp_path: Path) -> None:
    """a.txt's BROKEN line alone also makes another test error, which g.txt's FIX line (also
    in BAD) repairs: GOOD plus BROKEN is broken another way, so the cause is BROKEN with FIX,
    whose patch fails exactly its tests."""
    stable = (
        "if has('a.txt', 'BROKEN') and not has('g.txt', 'FIX'):\n"
        "    tests['suite.Other.test_stable'] = None\n"
        "else:\n"
        "    tests['suite.Other.test_stable'] = True\n"
    )
    runner = SUITE.replace('if has("e.txt", "BOMB"):', stable + 'if has("e.txt", "BOMB"):')
    runner = runner.replace(
        '    body = "" if ok else \'<failure type="AssertionError" message="no"/>\'',
        '    body = (\'<error type="NameError" message="x"/>\' if ok is None else\n'
        '            "" if ok else \'<failure type="AssertionError" message="no"/>\')',
    )
    assert runner != SUITE
    good = {**GOOD, "suite.py": runner, "g.txt": LINES}
    bad = {**BAD, "g.txt": edit(LINES, ("line 8\n", "FIX\n"))}
    repo = two_commits(tmp_path / "repo", good, bad, "")
    code, _, err, document = triage(repo, *JUNIT, "--test", "suite.Money.*")
    assert code == 0, err
    assert cause_lines(document) == {
        ("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN", "FIX"}
    }


def test_with_jobs_the_runs_overlap_and_no_share_of_the_wall_is_claimed(tmp_path: Path) -> None:
    """With -j 2 the runs' times overlap: wall time minus their sum is no time of ddchange's
    own (it goes below zero), so the report says how many ran at once instead, and how many
    runs made ahead no search asked for (as a single search's does; so does the JSON)."""
    repo = repository(tmp_path / "repo")
    code, out, err, document = triage(repo, *JUNIT, "-j", "2")
    assert code == 0, err
    unused = document["tests_ahead_unused"]
    assert document["jobs"] == 2
    assert f"s in all, up to 2 tests at once, and {unused} more test" in out
    assert "run ahead that the searches did not need." in out
    assert "ddchange's own" not in out


def test_a_triage_interrupted_before_any_cause_names_no_patch(tmp_path: Path) -> None:
    """Interrupted after the search's first run, no cause is found: the report says so (not
    "the causes below") and ends with the command that resumes, as a search's does; --patch-dir
    holds no patch, and the message says so rather than naming a range cause-1 … cause-0."""
    repo = repository(tmp_path / "repo")
    causes = tmp_path / "causes"
    command = [sys.executable, "-m", "ddchange", "good..bad", *JUNIT, "--patch-dir", str(causes)]
    done = interrupted_after([*command, "--", "python3", "suite.py"], repo.path, 3)
    assert done.returncode == 130, done.stderr
    assert "interrupted before any cause was found." in done.stdout
    assert "To resume, run the same command again here: ddchange good..bad" in done.stdout
    assert f"patches: none written to {causes} (no cause)" in done.stderr
    assert "cause-0" not in done.stderr
    assert list(causes.iterdir()) == []


def test_a_resumed_triage_reads_results_of_a_run_with_another_exit_code(tmp_path: Path) -> None:
    """b.txt's change alone makes the suite write its results and exit 2 (as pytest does on a
    collection error): a fresh triage reads that run's results, and so must one resumed from
    the journal, where BAD's record (exit 1) must not become the only failure, else that run
    is UNRESOLVED and the answers grow."""
    exit2 = (
        "import atexit, os\n"
        "if 'latin' in open('b.txt').read() and 'BROKEN' not in open('a.txt').read():\n"
        "    atexit.register(os._exit, 2)\n"
    )
    good = {**GOOD, "suite.py": exit2 + SUITE}
    fresh = two_commits(tmp_path / "fresh", good, BAD, "")
    code, _, err, first = triage(fresh, *JUNIT)
    assert code == 0, err
    resumed = two_commits(tmp_path / "resumed", good, BAD, "")
    command = [sys.executable, "-m", "ddchange", "good..bad", *JUNIT, "--", "python3", "suite.py"]
    done = interrupted_after(command, resumed.path, 2)  # GOOD and BAD are in the journal
    assert done.returncode == 130, done.stderr
    code, _, err, second = triage(resumed, *JUNIT)
    assert code == 0, err
    assert "different failure" not in json.dumps(second["log"])
    assert cause_lines(second) == cause_lines(first)


def test_each_cause_names_every_test_its_own_runs_show_failing(tmp_path: Path) -> None:
    """test_round fails with a.txt's BROKEN or with 0.txt's ALSO: its search ends on ALSO,
    test_sum's on BROKEN, whose runs show test_round failing too (and its check, GOOD,
    passing it). Each cause names all the tests its patch fails on GOOD, judged apart here."""
    runner = SUITE.replace(
        '"suite.Money.test_round": not has("a.txt", "BROKEN"),',
        '"suite.Money.test_round": not (has("a.txt", "BROKEN") or has("0.txt", "ALSO")),',
    )
    assert runner != SUITE
    good = {**GOOD, "suite.py": runner, "0.txt": LINES}
    bad = {**BAD, "0.txt": edit(LINES, ("line 5\n", "ALSO\n"))}
    repo = two_commits(tmp_path / "repo", good, bad, "")
    patches = tmp_path / "causes"
    code, _, err, document = triage(repo, *JUNIT, "--test", "suite.Money.*",
                                    "--patch-dir", str(patches))  # fmt: skip
    assert code == 0, err
    assert cause_lines(document) == {
        ("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN"},
        ("suite.Money.test_round",): {"ALSO"},
    }
    for number, cause in enumerate(document["causes"], 1):
        clone = tmp_path / f"clone{number}"
        subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", cause["base"]], check=True)
        patch = patches / f"cause-{number}.patch"
        subprocess.run(["git", "-C", str(clone), "apply", str(patch)], check=True)
        subprocess.run(["python3", "suite.py"], cwd=clone, check=False)
        report = (clone / "report.xml").read_text()
        failing = {
            f"suite.Money.{m}"
            for m in ("test_round", "test_sum")
            if f'name="{m}"><failure' in report
        }
        assert failing == set(cause["tests"]), number
    assert [t["causes"] for t in document["targets"]] == [[1, 2], [2]]


def test_a_cause_that_holds_another_causes_answer_is_its_own_cause(tmp_path: Path) -> None:
    """test_encoding fails only with b.txt's latin and c.txt's ENCODING together; test_c with
    ENCODING alone. The first answer holds the second, and neither says all the other says:
    two causes, each 1-minimal for its own test (the comparison of two such answers' tests
    once raised a TypeError)."""
    also = '\n    "suite.Text.test_c": not has("c.txt", "ENCODING"),'
    runner = SUITE.replace(
        '"suite.Old.test_known_bug": False,', '"suite.Old.test_known_bug": False,' + also
    )
    assert runner != SUITE
    repo = two_commits(tmp_path / "repo", {**GOOD, "suite.py": runner}, BAD, "")
    code, _, err, document = triage(repo, *JUNIT, "--test", "suite.Text.*")
    assert code == 0, err
    assert cause_lines(document) == {
        ("suite.Text.test_encoding",): {"latin", "ENCODING"},
        ("suite.Text.test_c",): {"ENCODING"},
    }


def test_retries_run_every_configuration_of_the_search_that_often(tmp_path: Path) -> None:
    """--retries 1 with --results: each configuration a search asks about runs twice, and the
    causes are those of a triage without it."""
    code, _, err, once = triage(repository(tmp_path / "once"), *JUNIT)
    assert code == 0, err
    code, _, err, twice = triage(repository(tmp_path / "twice"), *JUNIT, "--retries", "1")
    assert code == 0, err
    assert cause_lines(twice) == cause_lines(once)
    searched = [r for r in twice["log"] if r["phase"] not in ("good", "bad", "confirm")]
    runs: dict[tuple[str, ...], int] = {}
    for record in searched:
        runs[tuple(record["config"])] = runs.get(tuple(record["config"]), 0) + 1
    assert runs
    assert all(count >= 2 for count in runs.values()), runs


def test_strategy_history_triages_the_whole_range_commit_by_commit(tmp_path: Path) -> None:
    """--strategy history with --results: the whole range, its commits the first level (no
    bisection), and the bundled suite's three causes, each patch on GOOD."""
    scenario = samples.load("suite-triage")
    repo = samples.build_repo(scenario, tmp_path / "repo")
    request = dataclasses.replace(samples.request(scenario, repo), strategy="history")
    result = suite.run(request)
    assert result.outcome == "found"
    assert samples.causes_match(scenario, result)
    assert not any(r.phase == "bisect" for r in result.log)
    assert any(r.phase == "commit" for r in result.log), "the commit level was searched"
    good = Sandbox(repo).git("rev-parse", f"{scenario.good}^{{commit}}").decode().strip()
    assert {changes.base for changes in result.changes} == {good}


def test_a_block_of_two_commits_is_cut_by_commit_in_a_triage(tmp_path: Path) -> None:
    """One commit documents a.txt (a line beside the one that breaks), the next breaks it:
    GOOD..BAD has them as one block, but only the breaking commit's line is the cause, as a
    search of one test finds it (cut by commit, then each part removed)."""
    repo = two_commits(tmp_path / "repo", GOOD, {}, "")
    put(repo, {"a.txt": edit(LINES, ("line 19\n", "line 19, documented\n"))})
    repo.commit("docs: a.txt")
    put(
        repo,
        {"a.txt": edit(LINES, ("line 19\n", "line 19, documented\n"), ("line 20\n", "BROKEN\n"))},
    )
    repo.commit("a.txt: break it")
    repo.git("tag", "-f", "bad")
    code, _, err, document = triage(repo, *JUNIT, "--strategy", "diff", "--test", "suite.Money.*")
    assert code == 0, err
    assert cause_lines(document) == {("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN"}}


def test_a_cause_is_cut_to_the_line_changes_that_break(tmp_path: Path) -> None:
    """One commit documents line 19 and breaks line 20 beside it: one block, of one commit,
    whose removal passes. By default the check goes on at that block's line changes, and only
    the breaking line is the cause, as with `--granularity line`."""
    changed = edit(LINES, ("line 19\n", "line 19, documented\n"), ("line 20\n", "BROKEN\n"))
    repo = two_commits(tmp_path / "repo", GOOD, {"a.txt": changed}, "")
    money = ("--test", "suite.Money.*")
    tests = ("suite.Money.test_round", "suite.Money.test_sum")
    code, _, err, document = triage(repo, *JUNIT, *money)
    assert code == 0, err
    assert cause_lines(document) == {tests: {"BROKEN"}}
    code, _, err, document = triage(repo, *JUNIT, *money, "--granularity", "line")
    assert code == 0, err
    assert cause_lines(document) == {tests: {"BROKEN"}}


def test_patch_holds_every_cause_where_they_apply_on_one_commit(tmp_path: Path) -> None:
    """--patch with --results: over the whole range (the single commit after GOOD) one patch
    holds both causes, and on GOOD it fails every target; where the causes are inside
    different first bad commits, no patch and one line that says why (exit 2)."""
    repo = repository(tmp_path / "repo")
    patch = tmp_path / "all.patch"
    code, _, err, document = triage(repo, *JUNIT, "--patch", str(patch))
    assert code == 0, err
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "good"], check=True)
    subprocess.run(["git", "-C", str(clone), "apply", str(patch)], check=True)
    subprocess.run(["python3", "suite.py"], cwd=clone, check=False)
    report = (clone / "report.xml").read_text()
    for target in document["targets"]:
        assert f'name="{target["name"].rpartition(".")[2]}"><failure' in report
    scenario = samples.load("suite-triage")
    apart = samples.build_repo(scenario, tmp_path / "apart")
    results = [a for spec in scenario.results for a in ("--results", spec)]
    run = ddchange(apart, f"{scenario.good}..{scenario.bad}", "-q", "--patch",
                   str(tmp_path / "x.patch"), *results, "--", *scenario.test,
                   command=["run"])  # fmt: skip
    refused(run, 2, "no --patch written: the causes apply on 3 different commits")
    assert not (tmp_path / "x.patch").exists()


def timing_out(count: Path, test: str, condition: str, at: tuple[int, ...] = (1,)) -> str:
    """SUITE, with `test` failing with a TimeoutError (not the AssertionError of its failures)
    in the runs where `condition` holds that are `at` (1 for the first; counted in the file
    `count`): a failure at random, another way."""
    once = (
        "kinds = {}\n"
        f"if {condition}:\n"
        f"    n = int(open({str(count)!r}).read()) if os.path.exists({str(count)!r}) else 0\n"
        f"    open({str(count)!r}, 'w').write(str(n + 1))\n"
        f"    if n + 1 in {at!r}:\n"
        f"        tests[{test!r}] = False\n"
        f"        kinds[{test!r}] = 'TimeoutError'\n"
    )
    runner = SUITE.replace('if has("e.txt", "BOMB"):', once + 'if has("e.txt", "BOMB"):').replace(
        """'<failure type="AssertionError" message="no"/>'""",
        """'<failure type="%s" message="no"/>' % kinds.get(name, "AssertionError")""",
    )
    assert runner.count("kinds") == 3
    return runner


def test_good_failing_a_test_once_another_way_runs_again_and_the_test_is_triaged(
    tmp_path: Path,
) -> None:
    """GOOD's first run fails test_sum at random, with a TimeoutError (it fails at BAD with
    an AssertionError): GOOD runs again, test_sum passes there (a fact), and it is triaged
    with test_round, as in a steady suite (exit 5: runs of GOOD disagreed). It was "already
    failing at GOOD" and not searched."""
    runner = timing_out(tmp_path / "timed-out", "suite.Money.test_sum", "True")
    repo = two_commits(tmp_path / "repo", {**GOOD, "suite.py": runner}, BAD, "")
    code, _, err, document = triage(repo, *JUNIT)
    assert code == 5, err  # found, GOOD's runs disagreeing for test_sum
    assert cause_lines(document) == {
        ("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN"},
        ("suite.Text.test_encoding",): {"latin", "ENCODING"},
    }
    assert document["already_failing"] == ["suite.Old.test_known_bug"]
    good = [r for r in document["log"] if r["phase"] == "good"]
    assert [r["cases"]["suite.Money.test_sum"][:2] for r in good] == [
        ["fail", "TimeoutError"],
        ["pass", ""],
    ]


def steady_timing_out(count: Path, at: tuple[int, ...]) -> str:
    """SUITE with one more test, suite.Other.test_steady, that passes everywhere but times out
    (a failure at random) in the runs numbered `at` (1 for the first; counted in `count`)."""
    at_runs = (
        "kinds = {}\n"
        f"n = int(open({str(count)!r}).read()) + 1 if os.path.exists({str(count)!r}) else 1\n"
        f"open({str(count)!r}, 'w').write(str(n))\n"
        f"if n in {at!r}:\n"
        "    tests['suite.Other.test_steady'] = False\n"
        "    kinds['suite.Other.test_steady'] = 'TimeoutError'\n"
    )
    runner = (
        SUITE.replace(
            '"suite.Old.test_known_bug": False,',
            '"suite.Old.test_known_bug": False,\n    "suite.Other.test_steady": True,',
        )
        .replace('if has("e.txt", "BOMB"):', at_runs + 'if has("e.txt", "BOMB"):')
        .replace(
            """'<failure type="AssertionError" message="no"/>'""",
            """'<failure type="%s" message="no"/>' % kinds.get(name, "AssertionError")""",
        )
    )
    assert runner.count("kinds") == 3
    return runner


def assert_broken_alone_settled(out: str, document: dict, timeouts: int) -> None:
    """test_round's and test_sum's cause is BROKEN alone, 1-minimal, test_encoding's as in a
    steady suite; the steady test timed out in the first `timeouts` runs of BROKEN alone and
    passed in the next."""
    assert cause_lines(document) == {
        ("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN"},
        ("suite.Text.test_encoding",): {"latin", "ENCODING"},
    }
    broken = next(c for c in document["causes"] if "suite.Money.test_sum" in c["tests"])
    config = sorted(u["id"] for u in broken["changes"])
    steady = [r["cases"]["suite.Other.test_steady"][:2] for r in document["log"]
              if r["config"] == config]  # fmt: skip
    assert steady[: timeouts + 1] == [["fail", "TimeoutError"]] * timeouts + [["pass", ""]]
    assert "not shown to be 1-minimal" not in out


@pytest.mark.parametrize(("at", "timeouts"), [((6,), 1), ((6, 16, 17), 2)])
def test_a_check_another_test_left_unresolved_at_random_is_searched_again(
    tmp_path: Path, at: tuple[int, ...], timeouts: int
) -> None:
    """A steady test (passing at both ends) times out at random in run 6, the run that would
    show test_round's answer to be a.txt's BROKEN alone: that run is UNRESOLVED, and the
    answer would keep a.txt's other change, not shown 1-minimal. As at a commit of the
    bisection, that check runs once more (run 16, before the answer's reruns); the steady
    test passes there, BROKEN alone fails, and test_round is searched again: the cause is
    BROKEN alone, 1-minimal. Where it times out in run 16 too, nothing yet shows it flaky;
    in run 17, a rerun of the answer, it times out again where it passed before (seen to
    fail at random), so test_round is searched again and BROKEN alone runs a third time
    (`_settling`)."""
    runner = steady_timing_out(tmp_path / "count", at)
    repo = two_commits(tmp_path / "repo", {**GOOD, "suite.py": runner}, BAD, "")
    code, out, err, document = triage(repo, *JUNIT)
    assert code == 0, out + err
    assert_broken_alone_settled(out, document, timeouts)


@pytest.mark.parametrize(("broken", "runs"), [(1, 2), (2, 1)])
def test_a_check_breaking_one_steady_test_runs_once_more_and_one_breaking_two_does_not(
    tmp_path: Path, broken: int, runs: int
) -> None:
    """a.txt's BROKEN without its other change breaks `broken` steady tests, every time. The
    check of test_round's answer that removes that other change breaks them: with one, it runs
    once more (that failure might have come at random) and breaks it again; with two, once
    only (two failures at random in one run are far rarer). Either way the cause keeps the
    other change and says it is not shown 1-minimal: a steady suite pays that one run, and
    no more."""
    alone = 'has("a.txt", "BROKEN") and not has("a.txt", "line two")'
    steady = "".join(f'    "suite.Other.test_{n}": not ({alone}),\n' for n in range(broken))
    runner = SUITE.replace(
        '"suite.Old.test_known_bug": False,\n', '"suite.Old.test_known_bug": False,\n' + steady
    )
    repo = two_commits(tmp_path / "repo", {**GOOD, "suite.py": runner}, BAD, "")
    code, out, err, document = triage(repo, *JUNIT)
    assert code == 0, out + err
    assert cause_lines(document)[("suite.Money.test_round", "suite.Money.test_sum")] == {
        "BROKEN",
        "line two",
    }
    assert "not shown to be 1-minimal" in out
    broken_alone = [
        r for r in document["log"]
        if r["cases"] and r["cases"]["suite.Other.test_0"][0] == "fail"
    ]  # fmt: skip
    assert len(broken_alone) == runs
    assert len({tuple(r["config"]) for r in broken_alone}) == 1


TIMED_OUT = ["fail", "TimeoutError"]


def test_a_check_left_unresolved_before_a_test_was_seen_flaky_in_another_commit_runs_again(
    tmp_path: Path,
) -> None:
    """Two commits break two causes. Inside the first, the steady test times out in both
    runs (6, and 7 as the check runs once more) of BROKEN alone, before any run showed it
    flaky: test_round's cause keeps a.txt's other change, not shown 1-minimal. Inside the
    second commit, a rerun of test_encoding's answer shows it failing at random (run 21,
    where it passed in run 17). So the first commit's targets are triaged again, knowing
    it: BROKEN alone runs a third time, fails (the steady test passing), and the cause is
    BROKEN alone, 1-minimal. Before, the first cause stayed as it was."""
    runner = steady_timing_out(tmp_path / "count", (6, 7, 21))
    repo = two_commits(tmp_path / "repo", {**GOOD, "suite.py": runner}, {}, "")
    put(repo, {"a.txt": BAD["a.txt"]})
    repo.commit("a.txt: break it")
    put(repo, {"b.txt": BAD["b.txt"], "c.txt": BAD["c.txt"]})
    repo.commit("b.txt, c.txt: encoding")
    repo.git("tag", "-f", "bad")
    code, out, err, document = triage(repo, *JUNIT)
    assert code == 0, out + err
    assert_broken_alone_settled(out, document, 2)


AT_PARENT = 'has("d.txt", "fixed") and not has("a.txt", "BROKEN")'


@pytest.mark.parametrize(
    ("condition", "at", "at_parent"),
    [
        # once, at the parent: it runs again and passes
        (AT_PARENT, (1,), [TIMED_OUT, ["pass", ""]]),
        # at GOOD's first run (it passes in the next: seen to fail at random), then twice at
        # the parent: it runs a third time
        (
            f'{AT_PARENT} or not has("a.txt", "BROKEN") and not has("other.txt", "five")',
            (1, 3, 4),
            [TIMED_OUT, TIMED_OUT, ["pass", ""]],
        ),
        # the same, three times at the parent: it runs a fourth time, as `_settling` allows
        (
            f'{AT_PARENT} or not has("a.txt", "BROKEN") and not has("other.txt", "five")',
            (1, 3, 4, 5),
            [TIMED_OUT, TIMED_OUT, TIMED_OUT, ["pass", ""]],
        ),
        # twice at the parent before any run showed it flaky (the noise commit before it is
        # the second run of the condition, GOOD the first): the bisection skips the parent and
        # test_round's ends on the commit before, test_sum's on the parent. In test_sum's
        # triage the parent's runs (GOOD there) show test_round failing at random, so the
        # parent runs again and test_round is bisected again
        ('not has("a.txt", "BROKEN")', (3, 4), [TIMED_OUT, TIMED_OUT, ["pass", ""]]),
    ],
    ids=["once", "twice-seen-flaky-before", "thrice-seen-flaky-before", "twice-seen-flaky-after"],
)
def test_a_commit_where_a_test_fails_at_random_another_way_runs_again_in_the_bisection(
    tmp_path: Path, condition: str, at: tuple[int, ...], at_parent: list[list[str]]
) -> None:
    """test_round times out at random (another way than it fails at BAD) in the commit
    before the one that breaks it: that commit runs again until test_round passes there (a
    fact), so one cause breaks test_round and test_sum, inside the breaking commit, on its
    parent (exit 5: runs of that commit disagreed). Before, the bisection skipped the parent
    (after one run, then after two), and the cause stood on the commit before, inside both
    commits; or the same change was two causes on two bases."""
    runner = timing_out(tmp_path / "timed-out", "suite.Money.test_round", condition, at)
    repo = two_commits(tmp_path / "repo", {**GOOD, "suite.py": runner}, {}, "")
    put(repo, {"d.txt": BAD["d.txt"]})
    repo.commit("d.txt: fix it")
    parent = repo.git("rev-parse", "HEAD").decode().strip()
    put(repo, {"a.txt": BAD["a.txt"]})
    repo.commit("a.txt: break it")
    repo.git("tag", "-f", "bad")
    code, out, err, document = triage(repo, *JUNIT)
    assert code == 5, out + err
    assert cause_lines(document) == {("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN"}}
    assert [c["base"] for c in document["causes"]] == [parent]
    assert f"a.txt: break it, on its parent {parent[:12]}" in out
    runs = [
        r for r in document["log"] if r["phase"] == "bisect" and r["config"] == [f"commit:{parent}"]
    ]
    assert [r["cases"]["suite.Money.test_round"][:2] for r in runs] == at_parent
    # exit 5 states the confidence, as a single search does: 3 reruns at 1 in 4
    (cause,) = document["causes"]
    assert (cause["runs"], cause["risk"]) == (4, 0.25**3)
    assert "1-minimal; confidence 98.4%: if its tests fail at random in up to 1 run of 4" in out


def test_a_cause_whose_bisection_skipped_a_commit_names_the_commits_it_stands_in(
    tmp_path: Path,
) -> None:
    """The commit after GOOD leaves no test results (a truncated report), the next breaks
    test_round and test_sum, one more changes d.txt: their bisection cannot test the first,
    so their cause stands on the commit before it, inside both commits, and the report says
    so, not "on its parent"."""
    repo = two_commits(tmp_path / "repo", GOOD, {}, "")
    passed = repo.git("rev-parse", "HEAD").decode().strip()
    put(repo, {"e.txt": "TRUNCATED\n"})
    repo.commit("e.txt: a report cut short")
    put(repo, {"e.txt": LINES, "a.txt": BAD["a.txt"]})
    repo.commit("a.txt: break it")
    put(repo, {"d.txt": BAD["d.txt"]})
    repo.commit("d.txt: fix it")
    repo.git("tag", "-f", "bad")
    code, out, err, document = triage(repo, *JUNIT)
    assert code == 0, err
    assert cause_lines(document) == {("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN"}}
    assert document["causes"][0]["base"] == passed
    assert f"inside the commits after {passed[:12]}, where its tests passed, up to " in out
    assert "(the bisection could not test the commits between)" in out
    assert "on its parent" not in out
    assert "passed at the base" in out


def test_a_test_that_fails_once_at_random_is_searched_past_not_given_up(tmp_path: Path) -> None:
    """test_round fails once at random, in the first run that has a.txt's "line two" and not
    its BROKEN (a hunk its search tries alone): its search is misled there, the reruns of
    that answer pass (a fact), and it searches again: the causes are those of a steady
    suite, backed by their records, with exit 5 and the disagreement flagged (it ended in
    exit 4, no reliable answer, before)."""
    mark = tmp_path / "failed-once"
    once = (
        f"if has('a.txt', 'line two') and not has('a.txt', 'BROKEN') "
        f"and not os.path.exists({str(mark)!r}):\n"
        f"    open({str(mark)!r}, 'w').close()\n"
        "    tests['suite.Money.test_round'] = False\n"
    )
    runner = SUITE.replace('if has("e.txt", "BOMB"):', once + 'if has("e.txt", "BOMB"):')
    assert runner != SUITE
    repo = two_commits(tmp_path / "repo", {**GOOD, "suite.py": runner}, BAD, "")
    code, _, err, document = triage(repo, *JUNIT)
    assert mark.exists(), "the failure at random came"
    assert code == 5, err
    assert cause_lines(document) == {
        ("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN"},
        ("suite.Text.test_encoding",): {"latin", "ENCODING"},
    }
    assert not any(cause["flaky"] for cause in document["causes"])
    assert any(cause["disagreed"] for cause in document["causes"])


def test_a_triage_whose_bisection_a_failure_at_random_misled_bisects_that_test_again(
    tmp_path: Path,
) -> None:
    """Four commits after GOOD; the third breaks test_round and test_sum (BROKEN). test_round
    fails once at random, in the first run of the second commit's tree: its bisection asks
    that commit first, is misled, and ends there, where its triage finds nothing its reruns
    back. That commit runs again as an answer does, test_round passes (a fact), and its
    bisection goes again, to the third commit: one cause breaks both tests, with exit 5 and
    the disagreement said (it was exit 4, and the second commit's note as test_round's cause,
    flagged as not reliable)."""
    mark = tmp_path / "failed-once"
    once = (
        f"if has('notes.txt', 'step 2') and not os.path.exists({str(mark)!r}):\n"
        f"    open({str(mark)!r}, 'w').close()\n"
        "    tests['suite.Money.test_round'] = False\n"
    )
    runner = SUITE.replace('if has("e.txt", "BOMB"):', once + 'if has("e.txt", "BOMB"):')
    assert runner != SUITE
    repo = init(tmp_path / "repo")
    put(repo, {**GOOD, "suite.py": runner, "notes.txt": ""})
    commits = [repo.commit("good")]
    repo.git("tag", "good")
    for number in range(1, 5):
        broken = {"a.txt": BAD["a.txt"]} if number == 3 else {}
        put(repo, {"notes.txt": f"step {number}\n", **broken})
        commits.append(repo.commit(f"step {number}"))
    repo.git("tag", "bad")
    code, _, err, document = triage(repo, *JUNIT)
    assert mark.exists(), "the failure at random came"
    assert code == 5, err
    assert cause_lines(document) == {("suite.Money.test_round", "suite.Money.test_sum"): {"BROKEN"}}
    (cause,) = document["causes"]
    assert cause["first_bad"] == commits[3]
    assert not cause["flaky"]
    assert cause["disagreed"]
    second = [r for r in document["log"] if r["config"] == [f"commit:{commits[2]}"]]
    assert [r["phase"] for r in second] == ["bisect", "bisect"]
    assert [r["cases"]["suite.Money.test_round"][0] for r in second] == ["fail", "pass"]
    # Again: every run its path takes is taken over, each once (the misled triage is not)
    code, _, err, again = triage(repo, *JUNIT)
    assert (code, again["tests_run"], again["resumed"]) == (5, 0, len(again["log"])), err
    assert again["resumed"] < document["tests_run"]
    # Judged on its own: its patch on its base newly fails both tests and no other (one
    # change: without it is the base).
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", cause["base"]], check=True)
    every = [
        f"suite.{name}"
        for name in ("Money.test_round", "Money.test_sum", "Text.test_encoding",
                     "Old.test_known_bug", "Old.test_fixed")
    ]  # fmt: skip
    before = failing(clone, every)
    (tmp_path / "cause.patch").write_text(cause["patch"])
    subprocess.run(["git", "-C", str(clone), "apply", str(tmp_path / "cause.patch")], check=True)
    assert failing(clone, every) - before == {"suite.Money.test_round", "suite.Money.test_sum"}
    assert before <= failing(clone, every)


def test_fail_pattern_narrows_a_triage_to_the_failures_whose_message_matches(
    tmp_path: Path,
) -> None:
    """--fail-pattern with --results: test_round fails "off by a cent", the others "no"; only
    test_round is a target, and it fails only where its message matches."""
    runner = SUITE.replace(
        """    body = "" if ok else '<failure type="AssertionError" message="no"/>\'""",
        """    said = "off by a cent" if method == "test_round" else "no"
    body = "" if ok else '<failure type="AssertionError" message="%s"/>' % said""",
    )
    assert runner != SUITE
    repo = two_commits(tmp_path / "repo", {**GOOD, "suite.py": runner}, BAD, "")
    code, _, err, document = triage(repo, *JUNIT, "--fail-pattern", "off by a cent")
    assert code == 0, err
    assert [t["name"] for t in document["targets"]] == ["suite.Money.test_round"]
    assert cause_lines(document) == {("suite.Money.test_round",): {"BROKEN"}}
    failing = [r for r in document["log"] if r["phase"] == "bad"]
    assert failing[0]["cases"]["suite.Money.test_round"][2] == "off by a cent"


def test_isolate_gives_each_cause_a_passing_set_and_a_one_minimal_difference(
    tmp_path: Path,
) -> None:
    """--isolate with --results: each cause is a failing set and a passing set inside it, their
    difference 1-minimal by the records (dd). The encoding test needs b.txt's latin and c.txt's
    ENCODING lines: one of them is the difference, the other in the passing set. Judged apart
    from ddchange: each cause's patch (its failing set) on GOOD fails its tests, and without
    the difference's lines they pass again."""
    repo = repository(tmp_path / "repo")
    causes = tmp_path / "causes"
    code, out, err, document = triage(
        repo, *JUNIT, "--isolate", "--strategy", "diff", "--patch-dir", str(causes)
    )
    assert code == 0, err
    assert document["mode"] == "isolate"
    by_tests = {tuple(c["tests"]): c for c in document["causes"]}
    assert set(by_tests) == {
        ("suite.Money.test_round", "suite.Money.test_sum"),
        ("suite.Text.test_encoding",),
    }
    encoding = by_tests[("suite.Text.test_encoding",)]
    difference = cause_lines({"causes": [encoding]})[("suite.Text.test_encoding",)]
    context = {
        line[1:]
        for unit in encoding["passing"]
        for line in unit["diff"].splitlines()
        if line.startswith("+")
    }
    assert len(encoding["changes"]) == 1
    assert {"latin", "ENCODING"} <= difference | context
    assert not difference & context
    assert "the passing set, in the patch too" in out
    assert "the difference is 1-minimal" in out
    for number, cause in enumerate(document["causes"], 1):
        clone = on_good(repo, tmp_path / f"clone{number}", causes, number)
        assert failing(clone, cause["tests"]) == set(cause["tests"])
        for unit in cause["changes"]:  # the difference taken out: the passing set
            lines = unit["diff"].splitlines(keepends=True)
            old = "".join(line[1:] for line in lines if line.startswith("-"))
            new = "".join(line[1:] for line in lines if line.startswith("+"))
            path = clone / unit["path"]
            assert path.read_text().count(new) == 1
            path.write_text(path.read_text().replace(new, old))
        assert failing(clone, cause["tests"]) == set()


def on_good(repo: Sandbox, clone: Path, patches: Path, number: int) -> Path:
    """A clone of `repo` at GOOD with cause `number`'s patch from `patches` applied."""
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "good"], check=True)
    patch = patches / f"cause-{number}.patch"
    subprocess.run(["git", "-C", str(clone), "apply", str(patch)], check=True)
    return clone


def failing(clone: Path, tests: list[str]) -> set[str]:
    """Which of `tests` fail in a run of the suite in `clone`."""
    subprocess.run(["python3", "suite.py"], cwd=clone, check=False)
    report = (clone / "report.xml").read_text()
    return {test for test in tests if f'name="{test.rpartition(".")[2]}"><failure' in report}


def test_an_interrupt_inside_one_first_bad_commit_ends_the_triage_there(tmp_path: Path) -> None:
    """Ctrl-C in the triage inside the first of the bundled suite's three first bad commits:
    the run ends there (exit 130), the other commits are not triaged, and no cause is said to
    be checked by runs made after the signal (the one in flight at most comes after it)."""
    scenario = samples.load("suite-triage")
    repo = samples.build_repo(scenario, tmp_path / "repo")
    command = [sys.executable, "-m", "ddchange", *samples.command(scenario)]
    before = checkout_state(repo)
    done = interrupted_after(command, repo, 8)  # 6 to bisect, then inside the first commit
    assert checkout_state(repo) == before, "the checkout, index, refs and stash as they were"
    assert done.returncode == 130, done.stderr
    tests = [line for line in done.stderr.splitlines() if line.startswith("test")]
    assert len(tests) <= 9, "\n".join(tests)
    assert "interrupted" in done.stdout
    assert "1-minimal" not in done.stdout
