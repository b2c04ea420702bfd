"""Help where people look for it: -h, `ddchange help [COMMAND]`, and the man page.

The man page is written from the click commands (cli/manpage.py); here it is rendered by the
real groff, so a roff mistake shows as a warning, and read back as text.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import endtoend
import pytest
from endtoend import refused, two_commits

from ddchange.cli import cli
from ddchange.cli.manpage import render
from ddchange.cli.messages import EXIT_CODES

COMMANDS = sorted(cli.commands)


def ddchange(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ddchange", *args], capture_output=True, text=True, cwd=cwd
    )


def test_dash_h_is_help_for_ddchange_and_for_every_command() -> None:
    top = ddchange("-h")
    assert top.returncode == 0, top.stderr
    assert top.stdout == ddchange("--help").stdout
    assert all(name in top.stdout for name in COMMANDS)
    for name in COMMANDS:
        short, long = ddchange(name, "-h"), ddchange(name, "--help")
        assert short.returncode == 0, short.stderr
        assert short.stdout == long.stdout
        assert short.stdout.startswith(f"Usage: ddchange {name} ")


def test_help_command_shows_the_same_help() -> None:
    assert ddchange("help").stdout == ddchange("--help").stdout
    for name in COMMANDS:
        shown = ddchange("help", name)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout == ddchange(name, "--help").stdout
    unknown = ddchange("help", "bisect")
    assert unknown.returncode == 2
    assert "no command 'bisect'; the commands are: " in unknown.stderr


# What the exit codes mean, written down here and not read from the table the help is made of:
# ddchange's own (README, "Exit codes"), then the test command's as `git bisect run` reads them
# (git-bisect(1): 0 good, 125 skip, 1-127 but 125 bad, anything else aborts the bisection).
DDCHANGE_EXIT_CODES = [
    ("0", "found"),
    ("1", "not reproduced"),
    ("2", "usage error"),
    ("3", "internal error"),
    ("4", "flaky"),
    ("5", "found, though the test fails at random"),
    ("130", "interrupted"),
]
TEST_EXIT_CODES = [
    ("0", "pass"),
    ("1-127", "fail (but 125)"),
    ("125", "cannot be tested here (as git bisect skip): UNRESOLVED"),
    ("128-255", "stop everything: ddchange ends (exit 1), as git bisect run aborts"),
]


def test_run_help_lists_the_exit_codes() -> None:
    shown = ddchange("help", "run").stdout
    ours, _, tests = shown.partition("The test command's exit codes, as git bisect run reads them:")
    assert tests, "the test command's codes have their own list"
    for part, expected in ((ours, DDCHANGE_EXIT_CODES), (tests, TEST_EXIT_CODES)):
        lines = [line.split(maxsplit=1) for line in part.splitlines()]
        codes = {words[0]: words[1] for words in lines if len(words) == 2}
        for code, meaning in expected:
            assert codes.get(code, "").startswith(meaning), (code, meaning)


def test_a_range_with_dash_h_after_the_command_separator_is_the_tests_own() -> None:
    """`-- CMD -h` belongs to CMD: ddchange must not answer it with its help."""
    done = ddchange("HEAD~1..HEAD", "--", "true", "-h", cwd=Path("/"))
    assert "Usage:" not in done.stdout
    assert done.returncode == 2, "/ is no git repository"


def _man(page: str, tmp_path: Path) -> str:
    """`page` rendered as plain text by groff; fails on any groff warning."""
    groff = shutil.which("groff")
    if groff is None:
        pytest.skip("groff is not installed (.ci/run installs it)")
    source = tmp_path / "git-ddchange.1"
    source.write_text(page)
    done = subprocess.run(
        [groff, "-man", "-Tascii", "-P-bou", "-ww", "-rLL=200n", str(source)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "GROFF_NO_SGR": "1"},
    )
    assert done.returncode == 0
    assert done.stderr == "", done.stderr
    return done.stdout


def test_the_man_page_has_every_command_option_and_exit_code(tmp_path: Path) -> None:
    shown = _man(render(cli), tmp_path)
    context = click.Context(cli, info_name="ddchange")
    for name in COMMANDS:
        command = cli.get_command(context, name)
        assert command is not None
        assert f"ddchange {name} [OPTIONS]" in shown
        for param in command.params:
            if isinstance(param, click.Option):
                assert all(option in shown for option in param.opts), param.opts
    for code, meaning in EXIT_CODES:
        assert meaning in " ".join(shown.split())
        assert f"\n       {code}\n" in shown or f"\n       {code} " in shown
    assert "git ddchange GOOD..BAD [options] -- CMD [ARGS...]" in shown


def test_shell_completion_offers_commands_and_options() -> None:
    """The README's completion recipe rests on click's protocol: ask it as bash would."""

    def complete(words: str) -> list[str]:
        env = {**os.environ, "_DDCHANGE_COMPLETE": "bash_complete", "COMP_WORDS": words}
        env["COMP_CWORD"] = str(len(words.split()) - 1)
        done = subprocess.run(
            [sys.executable, "-m", "ddchange"], env=env, capture_output=True, text=True
        )
        return done.stdout.split()

    assert complete("ddchange re") == ["plain,reduce", "plain,replay", "plain,reset"]
    assert "plain,--granularity" in complete("ddchange run --gr")


# -- checked before the first test ---------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "command", "message"),
    [
        (["--report", "no/such/dir/r.html"], ["sh", "test.sh"],
         "cannot write --report no/such/dir/r.html: there is no directory"),
        (["--patch", "."], ["sh", "test.sh"], "'.' is a directory"),
        ([], ["no-such-program-here"], "no program named 'no-such-program-here' on PATH"),
        ([], ["sh test.sh"], "for a shell line, pass `-- sh -c 'sh test.sh'`"),
        (["-C", "no/such/repo"], ["sh", "test.sh"], "no such directory: no/such/repo"),
    ],
    ids=["report-dir", "patch-is-dir", "program", "shell-line", "repo"],
)  # fmt: skip
def test_what_can_be_checked_is_checked_before_any_test(
    options: list[str], command: list[str], message: str, tmp_path: Path
) -> None:
    marker = tmp_path / "a test ran"
    test = f"touch '{marker}'\ngrep -q BROKEN a.txt && exit 1; exit 0\n"
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, test)
    run = endtoend.ddchange(repo.path, "good..bad", *options, "--", *command)
    refused(run, 2, message)
    assert not marker.exists()


def test_help_imports_no_heavy_library() -> None:
    """`ddchange --help` starts fast because the commands import the search, git, the terminal
    and the report libraries only when they run (their time is measured in benchmarks/)."""
    probe = (
        "import sys, ddchange.cli\n"
        "from ddchange.cli import main\n"
        "heavy = ('git', 'rich', 'jinja2', 'tree_sitter', 'sqlite3', 'ddchange.session')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
