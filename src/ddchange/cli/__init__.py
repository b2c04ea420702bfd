"""The command line: `ddchange GOOD..BAD -- CMD`, `git ddchange ...`, and `ddchange demo`.

Owns argument parsing (click) and the commands; the progress display is in display.py, and
errors become messages and exit codes in messages.py.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from ddchange import __version__, errors, model
from ddchange.cli.messages import (
    EXIT_BUG,
    EXIT_CODES_HELP,
    EXIT_FLAKY,
    EXIT_FOUND,
    EXIT_INTERRUPTED,
    EXIT_NOT_REPRODUCED,
    EXIT_USAGE,
    explain,
)

if TYPE_CHECKING:
    from ddchange.session import Listener

_repository_option = click.option(
    "-C",
    "repo",
    type=click.Path(path_type=Path),
    default=Path("."),
    help="Run as if started in PATH (as git -C does).",
)


def _common_options(command: Any) -> Any:
    """The options every searching command shares."""
    for option in reversed(
        [
            _repository_option,
            click.option(
                "--patch",
                "patch_file",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Write the answer as a patch that `git apply` puts on GOOD.",
            ),
            click.option(
                "--json",
                "json_file",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Write the whole result as JSON (every test run included).",
            ),
            click.option(
                "--report",
                "html_file",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Write a self-contained HTML report (summary, diffs, a plot of the search).",
            ),
            click.option("--quiet", "-q", is_flag=True, help="Print only the answer."),
            click.option("--verbose", "-v", is_flag=True, help="One line for every evaluation."),
        ]
    ):
        command = option(command)
    return command


HELP = ("-h", "--help")


class RangeGroup(click.Group):
    """Routes `ddchange GOOD..BAD -- CMD` to the `run` command; subcommands keep their names."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in (*HELP, "--version"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


def _parse_range(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, str]:
    good, sep, bad = value.partition("..")
    if not sep or not good or not bad or bad.startswith("."):
        raise click.BadParameter(f"expected GOOD..BAD (two revisions and '..'), got {value!r}")
    return good, bad


def _check_pattern(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as error:
            raise click.BadParameter(f"not a regular expression: {error}") from None
    return value


@click.group(cls=RangeGroup, context_settings={"help_option_names": list(HELP)})
@click.version_option(__version__, prog_name="ddchange")
def cli() -> None:
    """Find the changes between GOOD and BAD that make a test fail.

    \b
      ddchange GOOD..BAD [options] -- CMD [ARGS...]
      git ddchange v1.0..v1.1 --build make -- make test
      ddchange demo
      ddchange help run
    """


@cli.command("help")
@click.argument("command", required=False)
@click.pass_context
def help_(ctx: click.Context, command: str | None) -> None:
    """Show the help of ddchange, or of one COMMAND."""
    parent = ctx.parent
    assert parent is not None  # a subcommand always has its group's context
    if command is None:
        click.echo(cli.get_help(parent))
        return
    found = cli.get_command(parent, command)
    if found is None:
        raise click.UsageError(
            f"no command {command!r}; the commands are: {', '.join(cli.list_commands(parent))}."
        )
    with click.Context(found, info_name=command, parent=parent) as sub:
        click.echo(found.get_help(sub))


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("revisions", metavar="GOOD..BAD", callback=_parse_range)
@click.argument("command", nargs=-1, required=True)
@click.option("--build", metavar="SHELL-CMD", help="Run before each test; failure = unresolved.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Kill build or test after this long (its whole process group); counts unresolved.",
)
@click.option("--fail-pattern", callback=_check_pattern, help="The output must also match.")
@click.option(
    "--granularity",
    type=click.Choice(model.GRANULARITIES),
    default="line",
    show_default=True,
    help="The finest level the answer is 1-minimal at.",
)
@click.option(
    "--strategy",
    type=click.Choice(model.STRATEGIES),
    default="diff",
    show_default=True,
    help="history: prefixes of GOOD..BAD's commits first; auto: bisect the first-parent "
    "history, then search inside the culprit commit (or the whole range, if it needs others).",
)
@click.option(
    "--isolate/--minimize",
    default=False,
    help="isolate: a passing and a failing set whose difference is 1-minimal (dd, fewer tests); "
    "minimize (default): a 1-minimal failing set (ddmin).",
)
@click.option(
    "--no-dependencies",
    is_flag=True,
    help="Do not keep uses together with the definitions they need.",
)
@click.option("--no-monotony", is_flag=True, help="Do not assume subsets of passes pass.")
@click.option(
    "--retries",
    type=click.IntRange(min=0),
    default=0,
    help="Run each test N more times; disagreeing outcomes mark the test flaky.",
)
@click.option("--no-confirm", is_flag=True, help="Skip re-running the answer at the end.")
@click.option(
    "--clean",
    is_flag=True,
    help="Remove untracked and ignored files (git clean -fdx) before each test, for builds that "
    "cannot build incrementally.",
)
@_common_options
def run(
    revisions: tuple[str, str],
    command: tuple[str, ...],
    build: str | None,
    timeout: float | None,
    fail_pattern: str | None,
    granularity: str,
    strategy: str,
    isolate: bool,
    no_dependencies: bool,
    no_monotony: bool,
    retries: int,
    no_confirm: bool,
    clean: bool,
    repo: Path,
    patch_file: Path | None,
    json_file: Path | None,
    html_file: Path | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Search GOOD..BAD for a minimal set of changes that makes CMD fail.

    Rerunning the same command resumes an interrupted run: tests it completed are not run
    again (see `ddchange log`).
    """
    request = model.Request(
        repo=repo,
        good=revisions[0],
        bad=revisions[1],
        test=command,
        build=build,
        timeout=timeout,
        fail_pattern=fail_pattern,
        monotony=not no_monotony,
        granularity=granularity,
        dependencies=not no_dependencies,
        strategy=strategy,
        isolate=isolate,
        retries=retries,
        confirm=not no_confirm,
        clean=clean,
    )
    outputs = Outputs(patch_file, json_file, html_file)
    _validate(request, outputs)
    from ddchange import session

    result = _search(lambda show: session.run(request, show), quiet, verbose, resumable=True)
    _finish(result, outputs)


@cli.command()
@click.argument("log_file", metavar="FILE", type=click.Path(exists=True, dir_okay=False))
@_common_options
def replay(
    log_file: str,
    repo: Path,
    patch_file: Path | None,
    json_file: Path | None,
    html_file: Path | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Replay a `ddchange log` FILE (edited or not), then continue that search."""
    from ddchange import runs, session
    from ddchange.report import testlog

    path = Path(log_file)
    try:
        description, records = testlog.parse(path.read_text(errors="replace"))
        request = runs.request_from(description, repo)
    except ValueError as error:
        line, problem = error.args if len(error.args) == 2 else (0, str(error))
        raise errors.BadLogFile(path, int(line), str(problem)) from None
    outputs = Outputs(patch_file, json_file, html_file)
    _validate(request, outputs)
    result = _search(
        lambda show: session.replay(request, records, show), quiet, verbose, resumable=True
    )
    _finish(result, outputs)


@cli.command()
@_repository_option
@click.option("--all", "show_all", is_flag=True, help="Every run, not only the latest.")
def log(repo: Path, show_all: bool) -> None:
    """Print the history of the latest run (replayable with `ddchange replay`)."""
    from ddchange import runs
    from ddchange.report import testlog

    recorded = runs.history(repo)
    if not recorded:
        click.echo("ddchange: no runs recorded in this repository yet.", err=True)
        return
    for logged in recorded if show_all else recorded[:1]:
        click.echo(testlog.render(logged.description, logged.records), nl=False)


@cli.command()
@_repository_option
def reset(repo: Path) -> None:
    """Remove all ddchange state: scratch trees and the recorded tests."""
    from ddchange import runs

    for path in runs.reset(repo):
        click.echo(f"removed scratch tree {path}", err=True)
    click.echo("ddchange: state removed; the next run starts from scratch.", err=True)


@cli.command()
@click.argument("name", required=False)
@click.option("--list", "list_only", is_flag=True, help="List the bundled scenarios.")
@click.option("--keep", is_flag=True, help="Keep the generated repository and say where.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the answer.")
@click.option("--verbose", "-v", is_flag=True, help="One line for every evaluation.")
def demo(name: str | None, list_only: bool, keep: bool, quiet: bool, verbose: bool) -> None:
    """Build a bundled sample repository and run the whole search on it."""
    from ddchange import samples, session

    if list_only:
        for scenario in samples.scenarios():
            click.echo(f"{scenario.name:12} {scenario.description}")
        return
    scenario = samples.load(name or samples.DEFAULT)
    workdir = Path(tempfile.mkdtemp(prefix="ddchange-demo-"))
    try:
        repo = samples.build_repo(scenario, workdir / scenario.name)
        if not quiet:
            click.echo(f"{scenario.name}: {scenario.description}", err=True)
            click.echo(f"repository: {repo}  ({scenario.good}..{scenario.bad})", err=True)
        request = samples.request(scenario, repo)
        result = _search(lambda show: session.run(request, show), quiet, verbose)
        answer = [(hunk.path, hunk.diff) for hunk in result.culprits]
        verdict = "matches" if samples.matches(scenario, answer) else "DIFFERS FROM"
        click.echo(f"The answer {verdict} the scenario's expected answer.")
        if verdict != "matches":
            raise SystemExit(EXIT_BUG)
    finally:
        if keep:
            click.echo(f"kept: {workdir}", err=True)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def _search(
    start: Callable[[Listener], model.Result],
    quiet: bool,
    verbose: bool,
    *,
    resumable: bool = False,
) -> model.Result:
    """Run a search with the progress display, and print its report; a `resumable` one
    stopped by Ctrl-C (in the search, or before it) ends with the command that resumes it."""
    from ddchange.cli.display import display
    from ddchange.report import text

    resume = f"To resume, run the same command again here: {_invocation()}"
    try:
        with display(quiet=quiet, verbose=verbose) as listener:
            result = start(listener)
    except KeyboardInterrupt:
        if not resumable:
            raise
        click.echo(f"ddchange: interrupted before the search; your repository is unchanged. "
                   f"{resume}", err=True)  # fmt: skip
        sys.exit(EXIT_INTERRUPTED)
    click.echo(text.render(result), nl=False)
    if result.outcome == "interrupted" and resumable:
        click.echo(resume)
    return result


def _invocation() -> str:
    """The command line this process was started with, as the user would type it again."""
    name = Path(sys.argv[0]).name
    program = "git ddchange" if name == "git-ddchange" else "ddchange"
    return f"{program} {shlex.join(sys.argv[1:])}"


@dataclass(frozen=True)
class Outputs:
    """The files a search was asked to write."""

    patch: Path | None = None
    json: Path | None = None
    html: Path | None = None


def _validate(request: model.Request, outputs: Outputs) -> None:
    """What can be checked before the first test: the output files can be written, and the
    test's program (a name without a slash) is on PATH. The revisions and -C are checked by
    the session before the first test too (they are needed to read the diff)."""
    for option, path in (("--patch", outputs.patch), ("--json", outputs.json),
                         ("--report", outputs.html)):  # fmt: skip
        problem = None if path is None else _unwritable(path)
        if path is not None and problem is not None:
            raise errors.UnwritableOutput(option, path, problem)
    program = request.test[0]
    if "/" not in program and shutil.which(program) is None:
        raise errors.ProgramNotFound(program)


def _unwritable(path: Path) -> str | None:
    """Why `path` cannot be written as a file, or None."""
    if path.is_dir():
        return "it is a directory"
    parent = path.absolute().parent
    if not parent.is_dir():
        return f"there is no directory {parent}"
    if not os.access(path if path.exists() else parent, os.W_OK):
        return "permission denied"
    return None


def _finish(result: model.Result, outputs: Outputs) -> None:
    """Write the requested files, then exit with the code the result's outcome calls for."""
    from ddchange.report import as_json, html

    if outputs.patch is not None:
        outputs.patch.write_bytes(result.patch)
        click.echo(
            f"patch: {outputs.patch} (apply on GOOD with `git apply {outputs.patch}`)", err=True
        )
    if outputs.json is not None:
        outputs.json.write_text(as_json.render(result))
    if outputs.html is not None:
        outputs.html.write_text(html.render(result), encoding="utf-8")
        click.echo(f"report: {outputs.html} (open it in a browser)", err=True)
    codes = {"found": EXIT_FOUND, "flaky": EXIT_FLAKY, "interrupted": EXIT_INTERRUPTED}
    if codes[result.outcome] != EXIT_FOUND:
        sys.exit(codes[result.outcome])


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM unwinds like Ctrl-C, so every `finally` (worktree removal) still runs."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> Any:
    """Console entry point for `ddchange` and `git-ddchange`."""
    # Diffs of non-UTF-8 files carry their bytes as surrogate escapes: print them as those bytes
    # rather than fail on a strictly UTF-8 terminal.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="surrogateescape")
    try:
        with _sigterm_as_interrupt():
            return cli.main(args=argv, prog_name="ddchange", standalone_mode=False)
    except click.UsageError as error:  # one line, like every other error, and what to do
        where = f"`{error.ctx.command_path} -h`" if error.ctx else "`ddchange -h`"
        click.echo(f"ddchange: {error.format_message()} (see {where})", err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as error:
        error.show()
        sys.exit(EXIT_USAGE)
    except (click.Abort, KeyboardInterrupt):
        click.echo("ddchange: interrupted; your repository is unchanged.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except errors.DDChangeError as error:
        message, code = explain(error)
        click.echo(f"ddchange: {message}", err=True)
        sys.exit(code)
    except OSError as error:
        click.echo(f"ddchange: {error.strerror or error}: {error.filename or ''}", err=True)
        sys.exit(EXIT_NOT_REPRODUCED)
    except Exception:
        click.echo("ddchange: internal error (a bug): please report this:", err=True)
        click.echo(traceback.format_exc(limit=-3), err=True)
        sys.exit(EXIT_BUG)
