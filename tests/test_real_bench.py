"""benchmarks/real.py's pure parts: diffs split into items and put back together, textbook ddmin,
and the culprit-line check (in real_judge.py and real_searches.py); the case folders of
benchmarks/real/ and the import of the project under test by their checks (checking.py). The
whole runner needs sdists from PyPI and is not run here."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import real_cases  # noqa: E402
import real_judge  # noqa: E402
import real_searches  # noqa: E402

BASE = [f"line {n}\n" for n in range(1, 41)]
# (first line index, lines replaced, new lines): an insertion at the top, an edit, a deletion,
# an insertion in the middle, an append at the end, each far enough from the others that they
# are separate hunks with 3 lines of context too.
CHANGES = [
    (0, 0, ["top\n"]),
    (9, 1, ["line 10 edited\n", "and one more\n"]),
    (18, 2, []),
    (28, 0, ["inserted\n"]),
    (40, 0, ["end\n"]),
]


def with_changes(chosen: set[int]) -> str:
    out, at = [], 0
    for k, (start, count, new) in enumerate(CHANGES):
        out += BASE[at:start]
        out += new if k in chosen else BASE[start : start + count]
        at = start + count
    return "".join(out + BASE[at:])


def git(repo: Path, *args: str, stdin: bytes = b"") -> bytes:
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        input=stdin,
        env=real_cases.clean_env(),
        capture_output=True,
        check=True,
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """good: f.txt, old.txt and a binary file; bad: f.txt with all CHANGES, old.txt deleted,
    new.txt added, the binary file changed."""
    git(tmp_path, "init", "-q")
    (tmp_path / "f.txt").write_text("".join(BASE))
    (tmp_path / "old.txt").write_text("old\n")
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "good")
    git(tmp_path, "tag", "good")
    (tmp_path / "f.txt").write_text(with_changes(set(range(len(CHANGES)))))
    (tmp_path / "old.txt").unlink()
    (tmp_path / "new.txt").write_text("new\n")
    (tmp_path / "blob.bin").write_bytes(bytes(reversed(range(256))))
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "bad")
    git(tmp_path, "tag", "bad")
    return tmp_path


def test_whole_files_are_one_item_each(repo: Path) -> None:
    items = real_judge.split_items(git(repo, "diff", "--binary", "good", "bad"))
    assert [(i.path, bool(i.hunk)) for i in items] == [
        ("blob.bin", False),
        *[("f.txt", True)] * len(CHANGES),
        ("new.txt", False),
        ("old.txt", False),
    ]


@pytest.mark.parametrize("context", [0, 3])
def test_every_subset_of_hunks_applies_where_it_belongs(repo: Path, context: int) -> None:
    """Leaving hunks out shifts the later ones: join_items renumbers them, and git apply then
    puts each one where it belongs, with and without context lines."""
    diff = git(repo, "diff", f"-U{context}", "good", "bad", "--", "f.txt")
    items = real_judge.split_items(diff)
    assert len(items) == len(CHANGES)
    zero = ["--unidiff-zero"] if context == 0 else []
    for size in range(len(items) + 1):
        for chosen in itertools.combinations(range(len(items)), size):
            git(repo, "checkout", "-qf", "good")
            patch = real_judge.join_items(items[k] for k in chosen)
            if patch:
                git(repo, "apply", *zero, "-", stdin=patch)
            assert (repo / "f.txt").read_text() == with_changes(set(chosen)), chosen


def test_all_items_together_make_bad(repo: Path) -> None:
    items = real_judge.split_items(git(repo, "diff", "--binary", "good", "bad"))
    git(repo, "checkout", "-qf", "good")
    git(repo, "apply", "-", stdin=real_judge.join_items(reversed(items)))
    git(repo, "add", "-A")
    assert git(repo, "diff", "--cached", "bad") == b""


def test_ddmin_finds_the_failing_pair() -> None:
    calls: list[frozenset[int]] = []

    def test(config: list[int]) -> str:
        calls.append(frozenset(config))
        return real_judge.FAIL if {3, 11} <= set(config) else real_judge.PASS

    assert real_searches.ddmin(16, test) == [3, 11]
    assert len(calls) == len(set(calls))  # the cache: no configuration twice


def test_ddmin_single_item_and_unresolved() -> None:
    def test(config: list[int]) -> str:
        if 7 in config:
            return real_judge.FAIL
        return real_judge.UNRESOLVED if len(config) > 4 else real_judge.PASS

    assert real_searches.ddmin(20, test) == [7]
    with pytest.raises(ValueError, match="does not fail"):
        real_searches.ddmin(3, lambda config: real_judge.PASS)


def test_culprit_lines_are_added_or_removed_lines_of_the_culprit_files(repo: Path) -> None:
    case = real_cases.Case(
        name="x",
        directory=repo,
        package="p",
        good="1",
        bad="2",
        good_sha256="",
        bad_sha256="",
        culprit_files=("f.txt",),
        culprit_lines=("line 10 edited", "line 19"),
    )
    diff = git(repo, "diff", "-U0", "good", "bad")
    assert real_judge.holds_culprit(case, diff)
    items = real_judge.split_items(diff)
    first_two = real_judge.join_items(items[:2])
    assert not real_judge.holds_culprit(case, first_two)  # no deletion of line 19
    other = real_cases.Case(**{**case.__dict__, "culprit_files": ("new.txt",)})
    assert not real_judge.holds_culprit(other, diff)


CASES = Path(__file__).resolve().parents[1] / "benchmarks" / "real"


@pytest.mark.parametrize(
    "directory",
    sorted(p for p in CASES.iterdir() if (p / "case.toml").exists()),
    ids=lambda p: p.name,
)
def test_every_case_pins_two_sdists_and_names_its_culprit(directory: Path) -> None:
    case = real_cases.load_case(directory)
    assert case.good != case.bad
    assert all(re.fullmatch("[0-9a-f]{64}", d) for d in (case.good_sha256, case.bad_sha256))
    assert case.source
    assert case.culprit_files
    assert case.culprit_lines
    assert "from checking import" in case.check.read_text()


CHECK = f"""
import sys
sys.path.insert(0, {str(CASES)!r})
from checking import run

def main(demo):
    return demo.CODE

run(main, "demo")
"""


@pytest.mark.parametrize(
    ("layout", "init", "code"),
    [
        ("src", "CODE = 1\n", 1),
        ("lib", "CODE = 0\n", 0),
        (".", "CODE = 1\n", 1),
        ("lib", "CODE = (\n", 125),  # a half-applied change that does not import
        ("lib", "OTHER = 1\n", 125),  # main fails: cannot tell, not "the regression"
    ],
)
def test_a_check_imports_the_package_from_src_lib_or_the_top(
    tmp_path: Path, layout: str, init: str, code: int
) -> None:
    (tmp_path / layout / "demo").mkdir(parents=True)
    (tmp_path / layout / "demo" / "__init__.py").write_text(init)
    (tmp_path / "check.py").write_text(CHECK)
    done = subprocess.run(
        [sys.executable, "check.py"], cwd=tmp_path, env=real_cases.clean_env(), check=False
    )
    assert done.returncode == code
