"""The history first (--strategy auto, the default): the bisection of the commits, then the
search inside the first bad commit against its parent, the fallbacks, and what the answer
says of where it stands. The pure `locate` is tested over graphs made here; every run of the
command over repositories made with the real git."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from endtoend import Exe, Run, ddchange, interrupted_after, put
from gitsandbox import Sandbox, init

from ddchange.model import Outcome
from ddchange.search.history import (
    Located,
    Range,
    Runs,
    Triages,
    Where,
    history_first,
    locate,
    triages_first,
)

# -- locate, over graphs made here ----------------------------------------------------------


@dataclass(frozen=True)
class Graph:
    """A commit graph: each commit's parents, first parent first."""

    parents_of: dict[str, tuple[str, ...]]

    def parents(self, sha: str) -> tuple[str, ...]:
        return self.parents_of[sha]

    def ancestors(self, sha: str) -> set[str]:
        seen, todo = set(), [sha]
        while todo:
            commit = todo.pop()
            if commit not in seen:
                seen.add(commit)
                todo.extend(self.parents_of[commit])
        return seen

    def first_parents(self, good: str, bad: str) -> list[str]:
        chain, commit, excluded = [], bad, self.ancestors(good)
        while commit not in excluded:
            chain.append(commit)
            commit = self.parents_of[commit][0]
        return chain[::-1]

    def merge_base(self, one: str, other: str) -> str | None:
        common = self.ancestors(one) & self.ancestors(other)
        best = [c for c in common if not any(c in self.ancestors(o) - {o} for o in common)]
        return best[0] if best else None

    def is_ancestor(self, older: str, newer: str) -> bool:
        return older in self.ancestors(newer)


def linear(count: int) -> Graph:
    """c0 <- c1 <- ... <- c{count}."""
    return Graph({"c0": (), **{f"c{n}": (f"c{n - 1}",) for n in range(1, count + 1)}})


def outcomes(table: dict[str, Outcome]) -> tuple[Callable[[str], Outcome], list[str]]:
    """A test that answers from `table` and notes every commit asked."""
    asked: list[str] = []

    def test(sha: str) -> Outcome:
        asked.append(sha)
        return table[sha]

    return test, asked


P, F, U = Outcome.PASS, Outcome.FAIL, Outcome.UNRESOLVED


def test_a_linear_history_ends_inside_the_first_bad_commit_against_its_parent() -> None:
    test, asked = outcomes({f"c{n}": P if n < 5 else F for n in range(9)})
    located = locate("c0", "c8", linear(8), test)
    assert (located.base, located.tip, located.where) == ("c4", "c5", Where.COMMIT)
    assert located.first_bad == "c5"
    assert "c0" not in asked
    assert "c8" not in asked
    assert len(asked) == 3  # log2 of the 8 commits
    assert [sha for sha, _ in located.asked] == asked


def test_untestable_commits_before_the_first_bad_one_leave_a_range() -> None:
    table = {f"c{n}": P if n < 3 else F for n in range(9)} | {"c3": U, "c4": U}
    test, _ = outcomes(table)
    located = locate("c0", "c8", linear(8), test)
    assert (located.base, located.tip, located.where) == ("c2", "c5", Where.SKIPPED)


def merged(branch_tip: Outcome, fork: Outcome = P) -> tuple[Graph, dict[str, Outcome]]:
    """main: m0 <- m1 <- M (merging b2) <- m3; branch: m0 <- b1 <- b2, b2 the culprit."""
    graph = Graph(
        {
            "m0": (),
            "m1": ("m0",),
            "b1": ("m0",),
            "b2": ("b1",),
            "M": ("m1", "b2"),
            "m3": ("M",),
        }
    )
    return graph, {"m0": fork, "m1": P, "b1": P, "b2": branch_tip, "M": F, "m3": F}


def test_a_merge_whose_branch_fails_alone_is_bisected_into_its_branch() -> None:
    graph, table = merged(branch_tip=F)
    test, asked = outcomes(table)
    located = locate("m0", "m3", graph, test)
    assert (located.base, located.tip, located.where) == ("b1", "b2", Where.COMMIT)
    assert located.merges == ("M",)
    assert located.first_bad == "M"
    assert "m0" in asked  # the fork is seen to pass before the branch is bisected from it


def test_a_merge_whose_branch_passes_alone_is_searched_against_its_first_parent() -> None:
    graph, table = merged(branch_tip=P)
    test, _ = outcomes(table)
    located = locate("m0", "m3", graph, test)
    assert (located.base, located.tip, located.where) == ("m1", "M", Where.MERGE)
    assert located.merges == ()


def test_a_merge_whose_fork_does_not_pass_is_searched_against_its_first_parent() -> None:
    graph, table = merged(branch_tip=F, fork=U)
    graph.parents_of["m0"] = ("root",)
    graph.parents_of["root"] = ()
    test, _ = outcomes({**table, "root": P})
    located = locate("root", "m3", graph, test)
    assert (located.base, located.tip, located.where) == ("m1", "M", Where.MERGE)


def maintenance(fork: Outcome) -> tuple[Graph, dict[str, Outcome]]:
    """main: c0 <- ... <- c8, c5 the culprit; a maintenance branch off c2: c2 <- r1 <- r2
    (GOOD, a release tag that is no ancestor of BAD), `fork` the outcome of c2."""
    graph = linear(8)
    graph.parents_of.update({"r1": ("c2",), "r2": ("r1",)})
    table = {f"c{n}": P if n < 5 else F for n in range(9)} | {"c2": fork, "r1": P, "r2": P}
    return graph, table


def test_good_off_the_main_line_is_bisected_from_the_commit_they_forked_from() -> None:
    graph, table = maintenance(fork=P)
    test, asked = outcomes(table)
    located = locate("r2", "c8", graph, test)
    assert (located.base, located.tip, located.where) == ("c4", "c5", Where.COMMIT)
    assert located.fork == "c2"
    assert asked[0] == "c2"  # seen to pass before any commit after it is asked
    assert located.asked[0] == ("c2", P)
    assert not {"r1", "r2", "c0", "c1"} & set(asked)
    assert len(asked) == 1 + 3  # the fork, then log2 of the 6 commits after it


def test_good_off_the_main_line_whose_fork_fails_leaves_the_whole_range() -> None:
    graph, table = maintenance(fork=F)
    test, asked = outcomes(table)
    located = locate("r2", "c8", graph, test)
    assert (located.base, located.tip, located.where) == ("r2", "c8", Where.WHOLE)
    assert (located.fork, asked) == ("c2", ["c2"])


def test_good_on_the_main_line_asks_for_no_fork() -> None:
    test, _ = outcomes({f"c{n}": P if n < 5 else F for n in range(9)})
    assert locate("c0", "c8", linear(8), test).fork == ""


# -- history_first, the strategy as a whole, over runs scripted here ---------------------------


def strategy(
    tips: list[str],
    *,
    bad: bool = True,
    good: bool = True,
    fails: Collection[str] = (),
    random: list[bool] | None = None,
    again: Collection[str] = (),
    confirm: bool = True,
) -> tuple[list[tuple[Located | None, int]], list[str]]:
    """`history_first` over scripted runs: each bisection ends at the next of `tips` (its base
    "c0", GOOD, for a tip "c1"); BAD's FAIL holds where `bad`, GOOD passes where `good`; a
    first bad commit's FAIL, acted on, holds for those in `fails`, and run again as an answer
    for those in `again`; the searches inside see the test fail at random as `random` says,
    in turn. It gives each search's (where, number) and every step asked, in order."""
    steps: list[str] = []
    left, seen = iter(tips), iter(random or [])

    @contextlib.contextmanager
    def bisecting() -> Iterator[None]:
        steps.append("[")
        yield
        steps.append("]")

    def located() -> Located:
        tip = next(left)
        steps.append(f"locate {tip}")
        base = "c0" if tip == "c1" else f"c{int(tip[1:]) - 1}"
        return Located(base=base, tip=tip, where=Where.COMMIT, asked=(), first_bad=tip)

    def asked(step: str, answer: bool) -> bool:
        steps.append(step)
        return answer

    def inside(where: Located | None) -> int:
        steps.append(f"search {where.tip if where else 'whole'}")
        return len(steps)

    runs = Runs(
        bisecting=bisecting,
        bad_fails=lambda: asked("bad", bad),
        good_passes=lambda: asked("good", good),
        locate=located,
        fails=lambda sha: asked(f"fails {sha}", sha in fails),
        search=inside,
        saw_random=lambda _number: next(seen, False),
        fails_again=lambda sha: asked(f"again {sha}", sha in again),
    )
    return history_first(runs, "c0", "c8", confirm=confirm, bisections=3), steps


def test_a_deterministic_test_bisects_once_and_searches_inside_once() -> None:
    """BAD's FAIL first, then the bisection, the first bad commit's FAIL acted on (for a test
    never seen to fail at random, its one run answers), and the search inside it."""
    searched, steps = strategy(["c5"], fails={"c5"})
    assert [where.tip if where else None for where, _ in searched] == ["c5"]
    assert steps == ["[", "bad", "locate c5", "fails c5", "]", "search c5"]


def test_a_first_bad_commit_that_passes_when_run_again_is_bisected_again() -> None:
    """Its PASS is a fact: the bisection goes again, in the same slots, and the search goes
    inside the commit it ends at next."""
    searched, steps = strategy(["c3", "c5"], fails={"c5"})
    assert [where.tip if where else None for where, _ in searched] == ["c5"]
    assert steps == [
        "[", "bad", "locate c3", "fails c3", "locate c5", "fails c5", "]", "search c5",
    ]  # fmt: skip


def test_a_search_that_saw_the_test_fail_at_random_runs_its_commit_again() -> None:
    """Where the commit then passes, the bisection and the search go again (BAD's FAIL, acted
    on once already, is not asked again); where it fails, the answer stands."""
    searched, steps = strategy(["c3", "c5"], fails={"c3", "c5"}, random=[True, True],
                               again={"c5"})  # fmt: skip
    assert [where.tip if where else None for where, _ in searched] == ["c3", "c5"]
    assert steps == [
        "[", "bad", "locate c3", "fails c3", "]", "search c3", "again c3",
        "[", "locate c5", "fails c5", "]", "search c5", "again c5",
    ]  # fmt: skip


def test_the_runs_of_goods_or_bads_that_disagree_search_the_whole_range() -> None:
    """BAD passing when run again, or GOOD failing where the bisection ended at it: the
    search goes over all of GOOD..BAD (None), and nothing else is asked."""
    searched, steps = strategy(["c5"], bad=False)
    assert [where for where, _ in searched] == [None]
    assert steps == ["[", "bad", "]", "search whole"]
    searched, steps = strategy(["c1"], good=False)
    assert [where for where, _ in searched] == [None]
    assert steps == ["[", "bad", "locate c1", "good", "]", "search whole"]


def test_the_bisections_stop_at_their_most_and_without_reruns_nothing_runs_again() -> None:
    """A first bad commit that passes each time it is acted on: at most three bisections,
    then the whole range. Without reruns asked, the first bisection's answer is searched, and
    no FAIL runs again."""
    searched, steps = strategy(["c3", "c4", "c5", "c6"])
    assert [where for where, _ in searched] == [None]
    assert steps == [
        "[", "bad", "locate c3", "fails c3", "locate c4", "fails c4", "locate c5", "fails c5",
        "]", "search whole",
    ]  # fmt: skip
    searched, steps = strategy(["c3", "c5"], random=[True], confirm=False)
    assert [where.tip if where else None for where, _ in searched] == ["c3"]
    assert steps == ["[", "bad", "locate c3", "]", "search c3"]


def suite_strategy(
    ends: dict[Range, list[str]],
    *,
    misled: dict[tuple[int, Range], list[str]] | None = None,
    bisected: list[dict[Range, list[str]]] | None = None,
    bisections: int = 3,
    interrupted: Range | None = None,
) -> tuple[list[tuple[Range, tuple[str, ...], int, int | None]], dict[Range, int], list[str]]:
    """`triages_first` over scripted runs, from the first bisection's `ends`: the triage of a
    range in round N (from 1) finds the targets `misled[(N, range)]` misled there; each
    bisection again ends as the next of `bisected` says; the triage of `interrupted` is. It
    gives each triage (its range, its targets, its number, the number of the one it replaced),
    the last of each range, and every step asked, in order."""
    steps: list[str] = []
    rounds, left = [1], iter(bisected or [])
    stops: set[int] = set()

    def triage(where: Range, mine: list[str]) -> int:
        steps.append(f"triage {where[1]}: {' '.join(mine)}")
        if where == interrupted:
            stops.add(len(steps))
        return len(steps)

    def misleads(where: Range, mine: list[str], _part: int) -> list[str]:
        gone = (misled or {}).get((rounds[0], where), [])
        assert set(gone) <= set(mine), "only a range's own targets are misled there"
        return gone

    def bisect(lost: list[str]) -> dict[Range, list[str]]:
        steps.append(f"bisect {' '.join(lost)}")
        rounds[0] += 1
        return next(left)

    runs = Triages(
        bisect=bisect,
        triage=triage,
        misled=misleads,
        planned=lambda ranges: steps.append(f"plan {len(ranges)}"),
        stopped=lambda part: part in stops,
    )
    done, last = triages_first(runs, ends, bisections=bisections)
    return (
        [(one.where, one.targets, one.part, one.replaces) for one in done],
        last,
        steps,
    )


A, B, C = ("c2", "c3"), ("c4", "c5"), ("c6", "c7")


def test_a_suite_whose_triages_are_backed_triages_each_range_once() -> None:
    """Each range the first bisection ended at, triaged once for its targets, in order; no
    target bisected again."""
    done, last, steps = suite_strategy({A: ["t1"], B: ["t2", "t3"]})
    assert steps == ["plan 2", "triage c3: t1", "triage c5: t2 t3"]
    assert done == [(A, ("t1",), 2, None), (B, ("t2", "t3"), 3, None)]
    assert last == {A: 2, B: 3}


def test_a_target_misled_to_a_range_is_bisected_again_and_both_ranges_triaged_again() -> None:
    """t2 was misled to A (its first bad commit passed for it when run again): it is bisected
    again and ends at C; A is triaged again without it, C with it, and B, untouched, not
    again. A range that a misled target leaves empty keeps no triage."""
    done, last, steps = suite_strategy(
        {A: ["t1", "t2"], B: ["t3"]}, misled={(1, A): ["t2"]}, bisected=[{C: ["t2"]}]
    )
    assert steps == [
        "plan 2", "triage c3: t1 t2", "triage c5: t3",
        "bisect t2", "plan 2", "triage c3: t1", "triage c7: t2",
    ]  # fmt: skip
    assert done == [
        (A, ("t1", "t2"), 2, None), (B, ("t3",), 3, None),
        (A, ("t1",), 6, 2), (C, ("t2",), 7, None),
    ]  # fmt: skip
    assert last == {A: 6, B: 3, C: 7}
    done, last, steps = suite_strategy(
        {A: ["t2"], B: ["t3"]}, misled={(1, A): ["t2"]}, bisected=[{B: ["t2"]}]
    )
    assert steps == [
        "plan 2", "triage c3: t2", "triage c5: t3", "bisect t2", "plan 2", "triage c5: t3 t2",
    ]  # fmt: skip
    assert done[-1] == (B, ("t3", "t2"), 6, 3)
    assert last == {B: 6}, "A, left with no target, keeps no triage"


def test_an_interrupted_triage_is_the_last() -> None:
    """The triage of A is interrupted: B is not triaged, and nothing is asked whether A misled
    a target (that would run its first bad commit again)."""
    done, last, steps = suite_strategy(
        {A: ["t1"], B: ["t2"]}, misled={(1, A): ["t1"]}, interrupted=A
    )
    assert steps == ["plan 2", "triage c3: t1"]
    assert done == [(A, ("t1",), 2, None)]
    assert last == {A: 2}


def test_the_suite_bisects_again_at_most_as_often_as_asked() -> None:
    """A target misled each time: at most `bisections` bisections (the first included); the
    last triage stands, its records as they are."""
    done, last, steps = suite_strategy(
        {A: ["t1"]},
        misled={(1, A): ["t1"], (2, B): ["t1"], (3, C): ["t1"]},
        bisected=[{B: ["t1"]}, {C: ["t1"]}],
        bisections=2,
    )
    assert steps == ["plan 1", "triage c3: t1", "bisect t1", "plan 2", "triage c5: t1"]
    assert [where for where, *_ in done] == [A, B]
    assert last == {B: 5}


# -- the command, over repositories made with the real git -----------------------------------

# The test: the total of the numbers in data.txt, scaled by the number in scale.txt, must be
# 60; the files `a` and `b` must not both be there; 125 (cannot tell) where the file `skip` is.
CHECK = Exe(
    "#!/bin/sh\n"
    "if [ -f skip ]; then exit 125; fi\n"
    "if [ -f a ] && [ -f b ]; then exit 1; fi\n"
    'total=$(python3 -c \'import sys; print(sum(int(x) for x in open("data.txt")) * '
    'int(open("scale.txt").read()))\')\n'
    '[ "$total" = 60 ]\n'
)


def history(path: Path, steps: list[dict[str, str | Exe | None]]) -> tuple[Sandbox, list[str]]:
    """A repository whose first commit (tag good) has check.sh, data.txt (10, 20, 30) and
    scale.txt (1), then one commit per step (the last tagged bad); the commits, oldest first."""
    repo = init(path)
    put(repo, {"check.sh": CHECK, "data.txt": "10\n20\n30\n", "scale.txt": "1\n", "notes.txt": ""})
    commits = [repo.commit("good")]
    repo.git("tag", "good")
    for number, step in enumerate(steps, 1):
        put(repo, {"notes.txt": f"step {number}\n", **step})
        commits.append(repo.commit(f"step {number}"))
    repo.git("tag", "bad")
    return repo, commits


def flaky_steps(prelude: str) -> list[dict[str, str | Exe | None]]:
    """Eight steps for `history`, the first of which makes check.sh run the shell `prelude`
    (a failure at random, say) before the check's own lines."""
    check = Exe("#!/bin/sh\n" + prelude + CHECK.content.split("\n", 1)[1])
    first: dict[str, str | Exe | None] = {"check.sh": check}
    return [first] + [{} for _ in range(7)]


def search(repo: Sandbox, *options: str) -> Run:
    return ddchange(repo.path, "good..bad", *options, "--", "./check.sh")


def reproduces(repo: Sandbox, tmp: Path, run: Run, patch: Path) -> bool:
    """Whether the patch, applied on the JSON report's base in a clone, makes the check fail."""
    clone = tmp / "judge"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", run.report["base"]], check=True)
    subprocess.run(["git", "-C", str(clone), "apply", str(patch)], check=True)
    return subprocess.run(["./check.sh"], cwd=clone).returncode == 1


def test_the_default_bisects_then_answers_inside_the_first_bad_commit(tmp_path: Path) -> None:
    steps: list[dict[str, str | Exe | None]] = [{} for _ in range(8)]
    steps[4] = {"data.txt": "10\n20\n31\n", "scale.txt": "1\n"}  # the culprit: 30 -> 31
    repo, commits = history(tmp_path / "repo", steps)
    patch = tmp_path / "answer.patch"
    run = search(repo, "--patch", str(patch))
    assert run.returncode == 0, run.stderr
    report = run.report
    assert report["first_bad"] == commits[5]
    assert report["base"] == commits[4]
    assert (report["good"], report["bad"]) == (commits[0], commits[-1])
    route = report["route"]
    assert route["searched"] == "commit"
    assert route["fallback"] is None
    assert [step["commit"] for step in route["bisection"]]  # each commit tested, with its verdict
    assert all(step["outcome"] in ("pass", "fail") for step in route["bisection"])
    # the first bad commit's FAIL is taken as BAD's is, for a test never seen to fail at random
    assert route["tip_runs"]["runs"] == route["tip_runs"]["fails"] == 1
    assert route["on_good"] == "fail"  # the answer fails on GOOD too
    assert [c["path"] for c in report["culprits"]] == ["data.txt"]
    assert report["tests_run"] == len(report["log"])
    assert "First bad commit " + commits[5][:12] in run.stdout
    assert reproduces(repo, tmp_path, run, patch)
    where = f"apply on {commits[4][:12]} (the parent of the first bad commit) with `git apply"
    assert where in run.stderr
    again = search(repo)  # every test taken over, the bisection's runs of two trees once
    assert again.returncode == 0, again.stderr
    assert (again.report["tests_run"], again.report["resumed"]) == (0, report["tests_run"])


def test_every_strategy_in_turn_shares_one_journal(tmp_path: Path) -> None:
    """--strategy diff, the default, --strategy history, the default again, on one journal:
    the same key, changes numbered each its own way. Each run takes over what it can (the
    runs of the same trees) and keeps the others' records for them; none refuses the journal
    as damaged, and each finds the culprit."""
    steps: list[dict[str, str | Exe | None]] = [{} for _ in range(6)]
    steps[3] = {"data.txt": "10\n20\n31\n"}
    repo, _ = history(tmp_path / "repo", steps)
    for options in (["--strategy", "diff"], [], ["--strategy", "history"], []):
        run = search(repo, *options)
        assert run.returncode == 0, (options, run.stderr)
        assert [c["path"] for c in run.report["culprits"]] == ["data.txt"]
    assert run.report["resumed"] > 0, "the default's second run took its tests over"
    assert run.report["tests_run"] == 0


def test_an_answer_that_needs_earlier_commits_says_so(tmp_path: Path) -> None:
    steps: list[dict[str, str | Exe | None]] = [{} for _ in range(6)]
    steps[1] = {"scale.txt": "2\n", "data.txt": "5\n10\n15\n"}  # 30 * 2: still 60
    steps[4] = {"data.txt": "5\n10\n16\n"}  # the culprit, on top of step 2
    repo, commits = history(tmp_path / "repo", steps)
    run = search(repo)
    assert run.returncode == 0, run.stderr
    assert run.report["first_bad"] == commits[5]
    assert run.report["base"] == commits[4]
    # On GOOD the patch does not apply (GOOD has 30, not 15): the report says so and how to
    # get an answer relative to GOOD.
    assert run.report["route"]["on_good"] is None
    assert run.report["route"]["on_good_note"] == "do not apply there"
    assert "--strategy diff" in run.stdout


def test_an_answer_whose_context_differs_on_good_is_applied_without_it_and_says_so(
    tmp_path: Path,
) -> None:
    steps: list[dict[str, str | Exe | None]] = [{} for _ in range(6)]
    steps[1] = {"data.txt": "5\n25\n30\n"}  # the lines around 30 change, the total does not
    steps[4] = {"data.txt": "5\n25\n31\n"}  # the culprit
    repo, commits = history(tmp_path / "repo", steps)
    run = search(repo)
    assert run.returncode == 0, run.stderr
    assert run.report["first_bad"] == commits[5]
    route = run.report["route"]
    assert route["on_good"] == "fail"  # 10 + 20 + 31 on GOOD
    assert route["on_good_note"] == "applied without their context lines, which differ there"
    assert "On GOOD, these changes (applied without their context lines" in run.stdout


def test_an_answer_that_passes_on_good_is_said_to_need_the_commits_before(
    tmp_path: Path,
) -> None:
    steps: list[dict[str, str | Exe | None]] = [{} for _ in range(6)]
    steps[1] = {"a": "harmless alone\n"}
    steps[4] = {"b": "harmless alone too\n"}  # fails only with `a`, which GOOD lacks
    repo, commits = history(tmp_path / "repo", steps)
    run = search(repo)
    assert run.returncode == 0, run.stderr
    assert run.report["first_bad"] == commits[5]
    assert [c["path"] for c in run.report["culprits"]] == ["b"]
    assert run.report["route"]["on_good"] == "pass"
    assert "needs what the commits before it brought" in run.stdout
    assert "--strategy diff" in run.stdout


def test_strategy_diff_searches_the_whole_range_on_good(tmp_path: Path) -> None:
    steps: list[dict[str, str | Exe | None]] = [{} for _ in range(5)]
    steps[2] = {"data.txt": "10\n20\n31\n"}
    repo, commits = history(tmp_path / "repo", steps)
    run = search(repo, "--strategy", "diff")
    assert run.returncode == 0, run.stderr
    assert run.report["base"] == commits[0]
    assert run.report["first_bad"] is None
    assert run.report["route"]["bisection"] == []


def test_a_single_commit_falls_back_to_the_whole_range_and_says_why(tmp_path: Path) -> None:
    repo, commits = history(tmp_path / "repo", [{"data.txt": "10\n20\n31\n"}])
    run = search(repo)
    assert run.returncode == 0, run.stderr
    assert run.report["base"] == commits[0]
    assert "only commit" in run.report["route"]["fallback"]
    assert "only commit" in run.stdout


def released(tmp_path: Path, fixed_on_branch: bool) -> tuple[Sandbox, list[str], str]:
    """A release tag on a maintenance branch off the main line's commit 2 (GOOD, no ancestor
    of BAD), the main line's culprit in its step 5; with `fixed_on_branch`, the main line fails
    from before the fork on (scale.txt 2) and only the branch is fixed."""
    steps: list[dict[str, str | Exe | None]] = [{} for _ in range(8)]
    steps[4] = {"data.txt": "10\n20\n31\n"}
    if fixed_on_branch:
        steps[0] = {"scale.txt": "2\n"}
        steps[4] = {}
    repo, commits = history(tmp_path / "repo", steps)
    repo.git("checkout", "-q", "-b", "maintenance", commits[2])
    put(repo, {"notes.txt": "release 1.0.1\n", "scale.txt": "1\n"})
    repo.commit("release 1.0.1")
    repo.git("tag", "v1.0.1")
    repo.git("checkout", "-q", "main")
    return repo, commits, repo.git("rev-parse", "v1.0.1").decode().strip()


def test_good_that_is_no_ancestor_of_bad_is_bisected_from_their_fork(tmp_path: Path) -> None:
    repo, commits, _ = released(tmp_path, fixed_on_branch=False)
    patch = tmp_path / "answer.patch"
    run = ddchange(repo.path, "v1.0.1..bad", "--patch", str(patch), "--", "./check.sh")
    assert run.returncode == 0, run.stderr
    route = run.report["route"]
    assert route["fork"] == commits[2]
    assert route["fallback"] is None
    assert route["bisection"][0] == {"commit": commits[2], "outcome": "pass", "runs": 1, "fails": 0}
    assert (run.report["first_bad"], run.report["base"]) == (commits[5], commits[4])
    assert [c["path"] for c in run.report["culprits"]] == ["data.txt"]
    assert f"the commit they forked from, {commits[2][:12]}, was tested first" in run.stdout
    assert "of the commits from the commit GOOD and BAD forked from to BAD 4 commits" in run.stdout
    assert reproduces(repo, tmp_path, run, patch)


def test_good_whose_fork_with_bad_fails_searches_the_whole_range_and_says_why(
    tmp_path: Path,
) -> None:
    repo, commits, release = released(tmp_path, fixed_on_branch=True)
    run = ddchange(repo.path, "v1.0.1..bad", "--", "./check.sh")
    assert run.returncode == 0, run.stderr
    route = run.report["route"]
    assert route["fork"] == commits[2]
    assert route["fallback"].startswith("GOOD is not an ancestor of BAD, and the commit they ")
    assert commits[2][:12] in route["fallback"]
    assert route["bisection"] == [{"commit": commits[2], "outcome": "fail", "runs": 1, "fails": 1}]
    assert run.report["base"] == release
    assert [c["path"] for c in run.report["culprits"]] == ["scale.txt"]


def test_good_after_bad_in_the_history_falls_back_and_says_why(tmp_path: Path) -> None:
    """A fix range: GOOD (passing) descends from BAD (failing); nothing lies between to bisect."""
    repo, _ = history(tmp_path / "repo", [{"data.txt": "10\n20\n31\n"}, {}])
    put(repo, {"data.txt": "10\n20\n30\n"})
    repo.commit("the fix")
    repo.git("tag", "fixed")
    run = ddchange(repo.path, "fixed..bad", "--", "./check.sh")
    assert run.returncode == 0, run.stderr
    assert run.report["route"]["fallback"].startswith("GOOD comes after BAD in the history")
    assert run.report["route"]["bisection"] == []


def test_untestable_commits_next_to_the_culprit_search_the_range_between(tmp_path: Path) -> None:
    steps: list[dict[str, str | Exe | None]] = [{} for _ in range(8)]
    steps[3] = {"skip": "broken build\n"}
    steps[4] = {"skip": None, "data.txt": "10\n20\n31\n"}
    repo, commits = history(tmp_path / "repo", steps)
    patch = tmp_path / "answer.patch"
    run = search(repo, "--patch", str(patch))
    assert run.returncode == 0, run.stderr
    assert run.report["route"]["searched"] == "skipped"
    assert (run.report["base"], run.report["tip"]) == (commits[3], commits[5])
    assert [c["path"] for c in run.report["culprits"]] == ["data.txt"]
    assert reproduces(repo, tmp_path, run, patch)


def test_a_merge_is_followed_into_its_branch(tmp_path: Path) -> None:
    repo, commits = history(tmp_path / "repo", [{}, {}])
    repo.git("checkout", "-q", "-b", "feature", commits[1])
    put(repo, {"feature.txt": "one\n"})
    repo.commit("feature 1")
    put(repo, {"data.txt": "10\n20\n31\n"})
    culprit = repo.commit("feature 2")
    put(repo, {"feature.txt": "three\n"})
    repo.commit("feature 3")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    merge = repo.rev("HEAD")
    put(repo, {"notes.txt": "after\n"})
    repo.commit("after")
    repo.git("tag", "-f", "bad")
    run = search(repo)
    assert run.returncode == 0, run.stderr
    assert run.report["route"]["merges"] == [merge]
    assert run.report["tip"] == culprit
    assert run.report["first_bad"] == merge
    assert [c["path"] for c in run.report["culprits"]] == ["data.txt"]


def test_a_first_bad_commit_whose_failure_does_not_hold_is_flaky_not_blamed(
    tmp_path: Path,
) -> None:
    """The commit fails on its first run only: its reruns disagree, and the run ends flaky
    (exit 4) with the evidence, never a confident commit."""
    counts = tmp_path / "counts"
    counts.mkdir()
    flaky = Exe(
        "#!/bin/sh\n"
        f'seen="{counts}/$(cat bug 2>/dev/null || echo none)"\n'
        "[ -f bug ] || exit 0\n"
        'if [ -e "$seen" ]; then exit 0; fi\n'
        ': > "$seen"; exit 1\n'
    )
    steps: list[dict[str, str | Exe | None]] = [{"check.sh": flaky}] + [
        {"bug": f"v{n}\n"} if n >= 3 else {} for n in range(1, 7)
    ]
    repo, _ = history(tmp_path / "repo", steps)
    run = search(repo)
    assert run.returncode == 4, run.stdout + run.stderr
    assert run.report["outcome"] == "flaky"
    assert run.report["route"]["tip_runs"]["fails"] < run.report["route"]["tip_runs"]["runs"]


def test_a_commit_that_fails_at_random_misleads_the_bisection_only_until_it_passes(
    tmp_path: Path,
) -> None:
    """The commit the bisection asks first fails once at random (it has no culprit): the
    bisection ends on it, taken as BAD's FAIL is (the test was never seen to fail at random);
    the search inside it sees the test fail at random, the commit runs again and passes (a
    fact), and the bisection goes again from what was seen, to the culprit's commit: found,
    exit 5, the disagreement as evidence."""
    once = tmp_path / "failed-once"
    steps = flaky_steps(
        f'if grep -q "step 4" notes.txt && [ ! -e "{once}" ]; then : > "{once}"; exit 1; fi\n'
    )
    steps[4] = {"data.txt": "10\n20\n31\n"}  # the culprit: 30 -> 31
    repo, commits = history(tmp_path / "repo", steps)
    run = search(repo)
    assert run.returncode == 5, run.stdout + run.stderr
    assert run.report["first_bad"] == commits[5]
    assert run.report["base"] == commits[4]
    assert [c["path"] for c in run.report["culprits"]] == ["data.txt"]
    misled = [b for b in run.report["route"]["bisection"] if b["commit"] == commits[4]]
    assert misled == [{"commit": commits[4], "outcome": "pass", "runs": 2, "fails": 1}]
    assert [d["outcomes"] for d in run.report["flaky"]] == [["fail", "pass"]]


def test_once_an_answer_passes_the_commit_searched_runs_again_before_another_search(
    tmp_path: Path,
) -> None:
    """Step 4 (four changes, none a culprit) fails in the first two runs of its changes at
    random: the bisection ends on it and the search inside takes one of its changes, whose
    rerun passes (a fact). Before a second search there, step 4's whole tree runs again, as
    an answer's FAIL would (every answer there rests on its one FAIL): it passes, nothing is
    searched there again, and the bisection goes on to the culprit's commit, whose check is
    the run's second."""
    count = tmp_path / "count"
    steps = flaky_steps(
        'if grep -q "step 4" notes.txt; then\n'
        f'  echo x >> "{count}"\n'
        f'  [ "$(wc -l < "{count}")" -le 2 ] && exit 1\n'
        "fi\n"
    )
    steps[3] = {f"extra{n}.txt": "one\n" for n in range(3)}  # step 4: four files, no culprit
    steps[5] = {"data.txt": "10\n20\n31\n"}  # the culprit: 30 -> 31
    repo, commits = history(tmp_path / "repo", steps)
    run = search(repo)
    assert run.returncode == 5, run.stdout + run.stderr
    assert (run.report["first_bad"], run.report["base"]) == (commits[6], commits[5])
    log = run.report["log"]
    passed = next(
        n for n, r in enumerate(log) if r["phase"] == "confirm" and r["outcome"] == "pass"
    )
    whole = log[passed + 1]  # step 4's own tree, all its changes
    assert (whole["phase"], whole["outcome"]) == ("confirm", "pass")
    assert len(whole["config"]) == 4
    after = log[passed + 2]  # no second search inside step 4: the bisection, again
    assert after["phase"] == "bisect"
    assert after["config"] == log[1]["config"], "step 4, the commit it ended on first"
    assert after["outcome"] == "pass"
    # The check inside the culprit's commit is the run's second: it asks for a quarter of the
    # risk (the test seen to fail at random), 4 reruns, and states both checks' chances.
    confirmation = run.report["confirmation"]
    assert confirmation["reruns"] == 4
    assert confirmation["risk"] == 0.25**3 + 0.25**4


def test_the_bisections_evidence_of_a_flaky_test_is_reported_whatever_commit_showed_it(
    tmp_path: Path,
) -> None:
    """Steps 4 and 2 each fail once at random, and the bisection is misled to step 2 until
    the search inside it sees the test fail at random and its rerun passes; the search goes
    on inside step 5, and both disagreements are the evidence (exit 5), though step 2 is
    neither end of that search."""
    seen = tmp_path / "seen"
    seen.mkdir()
    steps = flaky_steps(
        "step=$(sed -n 's/^step //p' notes.txt)\n"
        f'if [ "$step" = 4 ] || [ "$step" = 2 ]; then\n'
        f'  [ -e "{seen}/$step" ] || {{ : > "{seen}/$step"; exit 1; }}\n'
        "fi\n"
    )
    steps[4] = {"data.txt": "10\n20\n31\n"}  # the culprit: 30 -> 31
    repo, commits = history(tmp_path / "repo", steps)
    run = search(repo)
    assert run.returncode == 5, run.stdout + run.stderr
    assert (run.report["first_bad"], run.report["base"]) == (commits[5], commits[4])
    assert sorted(d["outcomes"] for d in run.report["flaky"]) == [["fail", "pass"]] * 2
    tested = [b["commit"] for b in run.report["route"]["bisection"]]
    assert commits[2] in tested, "every commit a bisection ran is listed"


def test_an_interrupt_during_the_bisection_leaves_a_run_that_resumes(tmp_path: Path) -> None:
    """Ctrl-C while commits are bisected: exit 130, one line that says how to go on, the
    repository as it was; the same command takes the tests over and ends as a fresh run."""
    steps: list[dict[str, str | Exe | None]] = [{} for _ in range(8)]
    steps[4] = {"data.txt": "10\n20\n31\n"}
    repo, commits = history(tmp_path / "repo", steps)
    command = [sys.executable, "-m", "ddchange", "good..bad", "--", "./check.sh"]
    done = interrupted_after(command, repo.path, 3)
    assert done.returncode == 130, done.stderr
    assert "interrupted before an answer could be reported" in done.stderr
    assert "Traceback" not in done.stderr
    run = search(repo)
    assert run.returncode == 0, run.stderr
    assert run.report["resumed"] >= 2
    assert run.report["first_bad"] == commits[5]


def test_two_jobs_bisect_two_commits_a_round_to_the_same_answer(tmp_path: Path) -> None:
    """-j 2: each round of the bisection tests two commits at once; the first bad commit, the
    base and the answer are those of -j 1."""
    steps: list[dict[str, str | Exe | None]] = [{} for _ in range(12)]
    steps[8] = {"data.txt": "10\n20\n31\n"}
    repo, commits = history(tmp_path / "repo", steps)
    one = search(repo)
    ddchange(repo.path, command=["reset"])
    two = search(repo, "-j", "2")
    assert one.returncode == two.returncode == 0, two.stderr
    for key in ("first_bad", "base", "tip"):
        assert one.report[key] == two.report[key]
    assert one.report["first_bad"] == commits[9]
    assert one.culprits == two.culprits == [("data.txt", "text")]
    assert two.report["jobs"] == 2
