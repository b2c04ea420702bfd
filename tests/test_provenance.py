"""Attribution of change units to the commits of GOOD..BAD, on real repositories.

Each case builds a small history with real git (linear, and with a merge of a side branch) and
checks that every unit of GOOD..BAD is attributed to exactly the commit that made it, read from
the history the test itself wrote.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from conftest import TEST_AUTHOR

from ddchange import git, samples
from ddchange.diff import linechanges, provenance, read

MakeRepo = Callable[..., tuple[Path, list[str]]]


def run_git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def units_by_text(repo: Path, good: str, bad: str) -> dict[str, tuple[str, ...]]:
    """Each unit's diff lines (without the @@ header) → its attributed commits."""
    handle = git.open_repo(repo)
    diff = linechanges.split_lines(read.read_diff(handle, good, bad))
    found = provenance.attribute(handle, good, bad, diff)
    return {
        "\n".join(line for line in unit.diff.splitlines() if not line.startswith("@@")): found[
            unit.id
        ]
        for unit in diff.hunks
    }


def test_added_changed_and_removed_lines_belong_to_their_commits(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    base = "".join(f"line {n}\n" for n in range(1, 13))
    repo, shas = make_repo(
        tmp_path,
        [
            {"a.txt": base},
            {"a.txt": base.replace("line 2\n", "line two\n")},
            {"a.txt": base.replace("line 2\n", "line two\n").replace("line 9\n", "")},
            {
                "a.txt": base.replace("line 2\n", "line two\n").replace("line 9\n", "")
                + "line 13\n",
                "new.bin": b"\0\1\2",
            },
        ],
    )
    good, changed, removed, added = shas
    found = units_by_text(repo, good, added)
    assert found["-line 2\n+line two"] == (changed,)
    assert found["-line 9"] == (removed,)
    assert found["+line 13"] == (added,)
    assert list(found.values()).count((added,)) == 2, "the binary file too"


def test_lines_that_two_commits_wrote_next_to_each_other_belong_to_one_commit_each(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """One git hunk, one run of lines: a replaced line (one commit), the line that another
    commit inserted above it, and lines a third one removed and added after it."""
    base = "one\ntotal = a + b\nold tail\nend\n"
    repo, (good, replaced, inserted, tail) = make_repo(
        tmp_path,
        [
            {"a.txt": base},
            {"a.txt": base.replace("a + b", "a + b + c")},
            {"a.txt": base.replace("total = a + b", "log(a)\ntotal = a + b + c")},
            {"a.txt": "one\nlog(a)\ntotal = a + b + c\nnew tail\nmore\nend\n"},
        ],
    )
    found = units_by_text(repo, good, tail)
    assert found == {
        "+log(a)": (inserted,),
        "-total = a + b\n+total = a + b + c": (replaced,),
        "-old tail\n+new tail": (tail,),
        "+more": (tail,),
    }


def test_a_side_branch_change_is_attributed_to_its_commit_not_to_the_merge(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    text = "keep\nold\nremove me\nend\n"
    repo, (good,) = make_repo(tmp_path, [{"f.txt": text, "g.txt": "g\n"}])
    run_git(repo, "checkout", "-q", "-b", "side")
    (repo / "f.txt").write_text(text.replace("remove me\n", ""))
    side = samples.commit_all(repo, "side: remove a line", TEST_AUTHOR, 1)
    run_git(repo, "checkout", "-q", "main")
    (repo / "g.txt").write_text("g changed\n")
    main = samples.commit_all(repo, "main: change g", TEST_AUTHOR, 2)
    run_git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = run_git(repo, "rev-parse", "HEAD")
    found = units_by_text(repo, good, merge)
    assert found["-remove me"] == (side,)
    assert found["-g\n+g changed"] == (main,)
    handle = git.open_repo(repo)
    assert git.first_parents(handle, good, merge) == [main, merge]
    info = git.commit_infos(handle, [merge, side])
    assert info[merge].parents == (main, side)
    assert info[side].subject == "side: remove a line"
    assert info[side].author == TEST_AUTHOR
    assert info[side].date.startswith("2024-01-02")


def test_positions_and_commits_of() -> None:
    attribution = {"u1": ("a",), "u2": ("a", "c"), "u3": ()}
    assert provenance.positions(attribution, ["a", "b", "c"]) == {"u1": 0, "u2": 2, "u3": 0}
    assert provenance.commits_of(attribution, ["c"]) == {"u2"}
    assert provenance.commits_of(attribution, ["b"]) == frozenset()


def test_a_sha256_repository_gets_the_same_attribution(tmp_path: Path) -> None:
    """Object names of 64 hex digits: blame's lines are read as well as SHA-1's 40."""
    repo = tmp_path / "repo"
    repo.mkdir()
    run_git(repo, "init", "-q", "--object-format=sha256", "-b", "main")
    base = "".join(f"line {n}\n" for n in range(1, 13))
    shas = []
    for day, text in enumerate(
        [
            base,
            base.replace("line 2\n", "line two\n"),
            base.replace("line 2\n", "line two\n") + "line 13\n",
            base.replace("line 2\n", "line two\n").replace("line 9\n", "\n") + "line 13\n",
        ]
    ):
        (repo / "a.txt").write_text(text)
        shas.append(samples.commit_all(repo, f"commit {day}", TEST_AUTHOR, day))
    good, changed, added, blanked = shas
    assert len(good) == 64
    found = units_by_text(repo, good, blanked)
    assert found == {
        "-line 2\n+line two": (changed,),
        "+line 13": (added,),
        "-line 9\n+": (blanked,),
    }
