"""End to end: the real `ddchange` command on real repositories, as a user runs it.

Covers the exact answer on every bundled scenario, a patch that reproduces the failure, the
safety promise (the user's checkout, index, refs and stash byte-identical, also after Ctrl-C and
SIGTERM), and every bad input that applies: an error message and exit code, never a traceback.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from gitsandbox import checkout_state
from userruns import (
    SampleRepo,
    culprit_matches,
    ddchange,
    git,
    inside,
    make_user_mess,
    scenario_args,
)

from ddchange import model, samples
from ddchange.cli import messages
from ddchange.search import confidence


# A whole suite to triage has causes, not one answer: test_suite_triage.py runs it.
@pytest.mark.parametrize("name", [s.name for s in samples.scenarios() if not s.causes])
def test_every_sample_repo_gives_its_expected_answer(
    name: str, sample_repo: SampleRepo, tmp_path: Path
) -> None:
    repo, scenario = sample_repo(name)
    report, patch = tmp_path / "report.json", tmp_path / "answer.patch"
    done = ddchange(
        *scenario_args(scenario),
        "--json",
        str(report),
        "--patch",
        str(patch),
        "--",
        *scenario.test,
        cwd=repo,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    result = json.loads(report.read_text())
    assert culprit_matches(scenario, result["culprits"], inside=inside(result)), result["culprits"]
    assert result["outcome"] == "found"
    assert result["good"] == git(repo, "rev-parse", scenario.good).strip()
    assert result["bad"] == git(repo, "rev-parse", scenario.bad).strip()
    assert result["hunks_total"] > len(result["culprits"])
    assert result["tests_run"] == len(result["log"])
    for key in ("path", "header", "old_start", "old_lines", "new_start", "new_lines", "diff"):
        assert all(key in culprit for culprit in result["culprits"])
    assert_patch_reproduces_failure(repo, scenario, patch, tmp_path / "check", result["base"])


@pytest.mark.parametrize("name", ["c-make", "py-rename", "rename-hunk"])
def test_without_tree_sitter_the_answers_are_the_same(
    name: str, sample_repo: SampleRepo, tmp_path: Path
) -> None:
    """The fallback path: git's hunk headers for functions, a token scan for names."""
    repo, scenario = sample_repo(name)
    report = tmp_path / "report.json"
    env = {**os.environ, "DDCHANGE_NO_SYNTAX": "1"}
    args = [*scenario_args(scenario), "--json", str(report), "--", *scenario.test]
    done = ddchange(*args, cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(report.read_text())
    assert culprit_matches(scenario, result["culprits"], inside=inside(result))


def assert_patch_reproduces_failure(
    repo: Path, scenario: samples.Scenario, patch: Path, where: Path, base: str
) -> None:
    """The patch on its base (GOOD, or the first bad commit's parent) fails the test with
    BAD's exit code: the answer is the real culprit."""
    subprocess.run(["git", "clone", "-q", str(repo), str(where)], check=True)

    def build_and_test() -> int:
        command = f"{scenario.build or 'true'} && {shlex.join(scenario.test)}"
        done = subprocess.run(command, shell=True, cwd=where, capture_output=True, timeout=120)
        return done.returncode

    git(where, "checkout", "-q", base)
    git(where, "apply", str(patch))
    with_patch = build_and_test()
    git(where, "checkout", "-q", "-f", scenario.bad)
    bad = build_and_test()
    assert bad not in (0, 125)
    assert with_patch == bad


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("two-files", []),
        ("merge", ["--strategy", "auto"]),  # commits' own trees are checked out to bisect
        ("merge", ["--isolate", "--strategy", "history"]),
    ],
)
def test_the_users_repository_is_untouched_by_a_run(
    sample_repo: SampleRepo, name: str, options: list[str]
) -> None:
    repo, scenario = sample_repo(name)
    make_user_mess(repo)
    before = checkout_state(repo)
    done = ddchange(*scenario_args(scenario), *options, "--", *scenario.test, cwd=repo)
    assert done.returncode == 0, done.stderr
    assert checkout_state(repo) == before


# -- bad input ----------------------------------------------------------------------------------


@pytest.fixture
def small_repo(make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path) -> Path:
    """good passes `sh test.sh`, bad fails it; `same` has bad's tree in another commit, and
    `reverted` too, two commits after it (a fix and its revert)."""
    test = "grep -q broken data.txt && exit 1; exit 0\n"
    repo, _ = make_repo(
        tmp_path,
        [
            {"test.sh": test, "data.txt": "fine\n"},
            {"data.txt": "broken\n"},
        ],
    )
    git(repo, "tag", "good", "HEAD~1")
    git(repo, "tag", "bad", "HEAD")
    git(repo, "commit", "-q", "--allow-empty", "-m", "same tree")
    git(repo, "tag", "same", "HEAD")
    (repo / "data.txt").write_text("fine\n")
    git(repo, "commit", "-q", "-am", "fixed")
    git(repo, "revert", "--no-edit", "HEAD")  # and broken again: same's tree, two commits on
    git(repo, "tag", "reverted", "HEAD")
    return repo


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["nope..bad", "--", "sh", "test.sh"], 2, "unknown revision 'nope'"),
        (["good..nope", "--", "sh", "test.sh"], 2, "unknown revision 'nope'"),
        (["bad..bad", "--", "sh", "test.sh"], 2, "are the same commit"),
        (["bad..same", "--", "sh", "test.sh"], 2, "identical trees"),
        (["same..reverted", "--", "sh", "test.sh"], 2, "identical trees"),
        (["same..reverted", "--results", "tap", "--", "sh", "test.sh"], 2, "identical trees"),
        (["good", "--", "sh", "test.sh"], 2, "expected GOOD..BAD"),
        (["good...bad", "--", "sh", "test.sh"], 2, "expected GOOD..BAD"),
        (["good..bad"], 2, "Missing argument"),
        (["good..bad", "--fail-pattern", "(", "--", "sh", "test.sh"], 2, "not a regular"),
        (["good..bad", "--timeout", "-1", "--", "sh", "test.sh"], 2, "--timeout"),
        (["good..bad", "--", "false"], 1, "GOOD should pass"),
        (["bad..good", "--", "sh", "test.sh"], 1, "is the range the wrong way round?"),
        (["good..bad", "--", "true"], 1, "BAD should fail"),
        (["good..bad", "--", "./no-such-test"], 1, "the test gave FAIL (exit 127);"),
        (["good..bad", "--timeout", "0.5", "--", "sleep", "30"], 1, "timeout after 0.5s"),
        (["good..bad", "--build", "exit 3", "--", "sh", "test.sh"], 1, "build failed"),
        (["good..bad", "--", "sh", "-c", "exit 200"], 1, "above 127"),
        (["good..bad", "--fail-pattern", "nomatch", "--", "sh", "test.sh"], 1, "BAD should fail"),
        (
            [
                "good..bad",
                "--fail-pattern",
                "ERR",
                "--",
                "sh",
                "-c",
                "echo ERR; yes | head -c 2M; grep -q broken data.txt && exit 1; exit 0",
            ],
            1,
            "no match for 'ERR' in the last 1 MiB of its 2.0 MiB of output",
        ),
    ],
)
def test_bad_input_gets_a_clear_error_and_exit_code(
    args: list[str], code: int, message: str, small_repo: Path
) -> None:
    before = checkout_state(small_repo)
    done = ddchange(*args, cwd=small_repo, timeout=60)
    assert done.returncode == code, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert checkout_state(small_repo) == before


def test_outside_a_repository(tmp_path: Path) -> None:
    done = ddchange("-C", str(tmp_path), "a..b", "--", "true", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0, "one line"
    assert "not inside a git repository" in done.stderr


def test_preflight_failure_shows_output_and_how_to_rerun(small_repo: Path) -> None:
    done = ddchange("good..bad", "--", "sh", "-c", "echo the-reason; exit 4", cwd=small_repo)
    assert done.returncode == 1
    assert "the-reason" in done.stderr
    assert "in 4 of 4 runs" in done.stderr
    assert "git clone --quiet --shared --no-checkout" in done.stderr
    assert "sh -c 'echo the-reason; exit 4'" in done.stderr


def test_the_printed_recipe_reproduces_the_failure_from_a_subdirectory(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """The recipe runs as ddchange ran: in the same subdirectory of a clone, the build in a shell
    of its own (its `cd` does not move the test), every name quoted (spaces in both)."""
    repo, _ = make_repo(
        tmp_path,
        [
            {"my tests/check.sh": "cat out/stamp; exit 4\n", "data.txt": "one\n"},
            {"data.txt": "2\n"},
        ],
        name="my repo",
    )
    build = "mkdir -p out && cd out && echo made > stamp"
    done = ddchange("HEAD~1..HEAD", "--build", build, "--", "sh", "check.sh", cwd=repo / "my tests")
    assert done.returncode == 1, done.stderr
    by_hand = _by_hand(done.stderr, tmp_path)
    assert (by_hand.returncode, by_hand.stdout) == (4, "made\n"), by_hand.stderr
    assert not (repo / "my tests" / "out").exists(), "the user's checkout is not touched"


def test_the_printed_recipe_puts_the_kept_files_in_place(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """On GOOD, --keep takes a file BAD adds (its name a glob) and removes one BAD deletes."""
    test = "sh 'helper*.sh'; test -e old.txt && echo old; exit 4\n"
    repo, _ = make_repo(
        tmp_path,
        [{"test.sh": test, "old.txt": "old\n", "data.txt": "1\n"},
         {"helper*.sh": "echo from BAD\n", "old.txt": None, "data.txt": "2\n"}],
    )  # fmt: skip
    keep = ("--keep", "helper*.sh", "--keep", "old.txt")
    done = ddchange("HEAD~1..HEAD", *keep, "--", "sh", "test.sh", cwd=repo)
    assert done.returncode == 1, done.stderr
    assert "  | from BAD\n" in done.stderr
    by_hand = _by_hand(done.stderr, tmp_path)
    assert (by_hand.returncode, by_hand.stdout) == (4, "from BAD\n"), by_hand.stderr


def test_odd_files_are_searched_and_the_binary_culprit_is_found(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """Renames, deletions, mode changes, symlinks, CRLF, no final newline, latin-1, spaces."""
    test = "if grep -q BROKEN 'dir with space/data.bin'; then exit 1; fi; exit 0\n"
    lines = "".join(f"line {i}\n" for i in range(30))
    repo, _ = make_repo(
        tmp_path,
        [
            {
                "test.sh": test,
                "dir with space/data.bin": b"\x00\x01fine\xff",
                "crlf.txt": b"one\r\ntwo\r\n",
                "noeol.txt": b"last line",
                "latin1.txt": "caf\xe9\n".encode("latin-1"),
                "old name.txt": lines,
                "gone.txt": "bye\n",
                "tool.sh": "echo tool\n",
            },
            {
                "dir with space/data.bin": b"\x00\x01BROKEN\xff",
                "crlf.txt": b"one\r\nTWO\r\n",
                "noeol.txt": b"last line, changed",
                "latin1.txt": "th\xe9\n".encode("latin-1"),
                "new name.txt": lines.replace("line 3\n", "line three\n"),
                "old name.txt": None,
                "gone.txt": None,
            },
        ],
    )
    git(repo, "update-index", "--chmod=+x", "tool.sh")
    os.symlink("crlf.txt", repo / "link")
    git(repo, "add", "link")
    git(repo, "commit", "-q", "-m", "mode and symlink")
    git(repo, "tag", "good", "HEAD~2")
    report = tmp_path / "report.json"
    whole = ("--strategy", "diff")  # every odd change in one search, the mode and the link too
    done = ddchange("good..HEAD", *whole, "--json", str(report), "--", "sh", "test.sh", cwd=repo)
    assert done.returncode == 0, done.stderr
    result = json.loads(report.read_text())
    assert [(c["path"], c["kind"]) for c in result["culprits"]] == [
        ("dir with space/data.bin", "content")
    ]
    assert result["hunks_total"] >= 9


def test_escape_codes_from_the_repository_and_the_test_reach_no_terminal(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """A file name, a diff line and the test's output with escape sequences (clear the screen,
    set the window title, red) are printed escaped: in the report, the progress lines, the log
    and a pre-flight failure's output."""
    name = "\x1b[2Jname.txt"
    test = "grep -q broken *name.txt && { printf '\\033[31mFAILED\\r\\n'; exit 1; }; exit 0\n"
    repo, _ = make_repo(
        tmp_path,
        [{"test.sh": test, name: "fine\n"}, {name: "\x1b]0;title\x07broken\n"}],
    )
    found = ddchange("HEAD~1..HEAD", "--", "sh", "test.sh", cwd=repo)
    logged = ddchange("log", cwd=repo)
    failed = ddchange(
        "HEAD~1..HEAD", "--", "sh", "-c", "printf '\\033[2J\\033]0;x\\007boom'; exit 3", cwd=repo
    )
    assert (found.returncode, logged.returncode, failed.returncode) == (0, 0, 1), failed.stderr
    assert "[1] \\x1b[2Jname.txt:1" in found.stdout
    assert "    +\\x1b]0;title\\x07broken\n" in found.stdout
    assert "  | \\x1b[2J\\x1b]0;x\\x07boom" in failed.stderr
    for done in (found, logged, failed):
        printed = done.stdout + done.stderr
        assert not set(printed) & {"\x1b", "\x07", "\r"}, printed


def test_git_subcommand_entry_point_is_installed() -> None:
    scripts = Path(sys.executable).parent
    assert (scripts / "git-ddchange").exists()
    assert (scripts / "ddchange").exists()


def test_demo_runs_the_default_scenario(tmp_path: Path) -> None:
    done = ddchange("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "matches the scenario's expected answer" in done.stdout


def test_unwritable_journal_gives_a_clear_error(small_repo: Path) -> None:
    (small_repo / ".git" / "ddchange").write_text("a file where the journal's directory goes\n")
    done = ddchange("good..bad", "--", "sh", "test.sh", cwd=small_repo)
    assert done.returncode == 1
    assert "the journal" in done.stderr
    assert "`ddchange reset`" in done.stderr
    assert "Traceback" not in done.stderr
    assert ddchange("reset", cwd=small_repo).returncode == 0
    assert ddchange("good..bad", "--", "sh", "test.sh", cwd=small_repo).returncode == 0


def test_the_test_runs_in_the_subdirectory_the_user_is_in(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """As with `git bisect run`, relative paths in the command mean the same as in the shell."""
    test = "grep -q broken ../data.txt && exit 1; exit 0\n"
    repo, _ = make_repo(
        tmp_path,
        [{"tests/check.sh": test, "data.txt": "fine\n"}, {"data.txt": "broken\n"}],
    )
    done = ddchange("HEAD~1..HEAD", "--", "sh", "check.sh", cwd=repo / "tests")
    assert done.returncode == 0, done.stderr
    assert "data.txt" in done.stdout


def test_the_readme_states_the_checks_as_the_code_runs_them(
    small_repo: Path, tmp_path: Path
) -> None:
    """The README's counts of the checks, against what a real run's test log recorded."""
    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text().split())
    report = tmp_path / "report.json"
    done = ddchange("good..bad", "--json", str(report), "--", "sh", "test.sh", cwd=small_repo)
    assert done.returncode == 0, done.stderr
    phases = [record["phase"] for record in json.loads(report.read_text())["log"]]
    assert (phases.count("good"), phases.count("bad")) == (1, 1)
    assert phases[:2] in (["good", "bad"], ["bad", "good"]), "the pre-flight comes first"
    assert "GOOD passes and BAD fails there, once each" in readme
    reruns, rate = confidence.reruns(model.CONFIDENCE), confidence.FLAKE_RATE
    assert f"failed in {reruns} more runs (at the default `--confidence {model.CONFIDENCE}`)" in (
        readme
    )
    assert f"(default {model.CONFIDENCE}: {reruns} reruns)" in readme
    assert f"survives {reruns} reruns only {rate**reruns:.2%} of the time" in readme
    assert f'("Confidence {100 * (1 - rate**reruns):.1f}%")' in readme
    assert f"step 6; {reruns + 1} tests fewer at the default confidence" in readme
    checks = sum(phase in ("good", "bad", "confirm") for phase in phases)
    assert checks == 2 + reruns + 1, "GOOD and BAD, the answer's reruns and GOOD once more"
    assert f"the checks cost {checks} tests in all" in readme
    assert f"(0.999: {confidence.reruns(0.999)} reruns)" in readme
    assert f"fails at random in up to 1 run of {round(1 / rate)}" in readme


def test_the_readme_and_run_help_give_the_same_exit_codes() -> None:
    """One source: messages.EXIT_CODES is what `ddchange run --help` prints and the README lists."""
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    shown = subprocess.run(
        [sys.executable, "-m", "ddchange", "run", "--help"], capture_output=True, text=True
    ).stdout
    for code, meaning in messages.EXIT_CODES:
        assert f"| {code} | {meaning} |" in readme
        assert f"{code:>3}  {meaning}" in shown
    for code, meaning in messages.TEST_EXIT_CODES:
        assert f"| {code} | {meaning} |" in readme
        assert f"{code:>7}  {meaning}" in shown


def _by_hand(stderr: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The recipe a failed pre-flight printed, run as a user would paste it into a shell."""
    lines = stderr.splitlines()
    recipe = lines[lines.index("reproduce it by hand:") + 1].strip()
    (tmp_path / "tmp").mkdir()
    return subprocess.run(
        ["sh", "-c", recipe],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
        check=False,
    )


def test_a_stop_signal_after_the_command_is_over_is_no_death_by_signal() -> None:
    """Once the command has said its end, Ctrl-C or SIGTERM has nothing to stop: the process
    still exits as the command said (a signal in the last moments made exit -2 of a run that
    had printed its answer, in benchmarks/faults.py)."""
    probe = (
        "import os, signal, sys\n"
        "from ddchange.cli import main\n"
        "main(['--help'])\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "print('still here')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("still here\n")
