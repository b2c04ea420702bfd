"""The command line: `ddchange GOOD..BAD -- CMD`, `git ddchange ...`, and `ddchange demo`.

Owns argument parsing (click) and the commands. A search's edges (checks before the first
test, the report, the files and the exit code) are in outputs.py, the progress display in
display.py, errors become messages and exit codes in messages.py, and manpage.py writes the
man page from these commands.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ddchange import __version__, errors, model
from ddchange.cli import outputs
from ddchange.cli.messages import (
    EXIT_CODES_HELP,
    explain,
)
from ddchange.errors import Exit
from ddchange.report.words import printable

if TYPE_CHECKING:
    from ddchange import samples

_repository_option = click.option(
    "-C",
    "repo",
    type=click.Path(path_type=Path),
    default=Path("."),
    help="Run as if started in PATH (as git -C does).",
)


# Each job is a scratch tree (a checkout of GOOD) with its build, its test and a kernel watch
# of its own (Linux gives a user 128 inotify instances by default): more at once than this
# outgrows one machine, and failed before the first test ("Too many open files").
MAX_JOBS = 64


def _jobs(ctx: click.Context, param: click.Parameter, value: str) -> int:
    """-j N: a count from 1 to MAX_JOBS, or "auto" for the cores this process may use."""
    if value == "auto":
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        return min(cores, MAX_JOBS)
    if not value.isdigit() or not 1 <= int(value) <= MAX_JOBS:
        raise click.BadParameter(f"{value!r} is not a count from 1, nor auto (at most {MAX_JOBS})")
    return int(value)


# The transports of a Dask scheduler's address that another machine can reach.
_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")


def _scheduler(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--scheduler ADDRESS: SCHEME://HOST:PORT (tcp:// when no scheme is given, as Dask
    reads it), checked before anything runs: Dask itself waits for a bad one, then fails."""
    if value is None:
        return None
    scheme, sep, rest = value.partition("://")
    if not sep:
        scheme, rest = "tcp", value
    host, _, port = rest.rpartition(":")
    if scheme not in _SCHEMES or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise click.BadParameter(
            f"{value!r} is not the address of a Dask scheduler: tcp://HOST:PORT (or tls://, "
            "ws://, wss://, ucx://)"
        )
    return value


def _needs_scheduler(scheduler: str | None, worker_clone: str | None) -> None:
    if worker_clone is not None and scheduler is None:
        raise click.UsageError("--worker-clone needs --scheduler (the workers that clone it)")


_F = TypeVar("_F", bound=Callable[..., Any])  # a command, as click's options take and give it


def _timeout_option(help: str) -> Callable[[_F], _F]:
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True, max=model.MAX_TIMEOUT),
        callback=_check_finite,
        metavar="SECONDS",
        help=help,
    )


def _fail_pattern_option(help: str) -> Callable[[_F], _F]:
    return click.option("--fail-pattern", callback=_check_pattern, metavar="REGEX", help=help)


def _confidence_option(help: str) -> Callable[[_F], _F]:
    return click.option(
        "--confidence",
        type=click.FloatRange(min=0, max=1, max_open=True),
        callback=_check_finite,
        default=model.CONFIDENCE,
        show_default=True,
        help=help,
    )


def _jobs_option(help: str) -> Callable[[_F], _F]:
    return click.option("-j", "--jobs", callback=_jobs, default="1", metavar="N|auto", help=help)


_json_option = click.option(
    "--json",
    "json_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the whole result as JSON (every test run included).",
)


def _output_options(command: Any) -> Any:
    """The files and the verbosity of a search: every searching command and the demo."""
    for option in reversed(
        [
            click.option(
                "--patch",
                "patch_file",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Write the answer as a patch that `git apply` puts on GOOD (by default, "
                "on the parent of the first bad commit the search went inside).",
            ),
            _json_option,
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


def _common_options(command: Any) -> Any:
    """The options every searching command shares."""
    for option in reversed(
        [
            _repository_option,
            _jobs_option(
                "Build and test up to N configurations at once, each in a scratch tree of "
                f"its own (auto: one per usable core; at most {MAX_JOBS}). The answer and the "
                "journal are the same for every N."
            ),
            click.option(
                "--scheduler",
                metavar="ADDRESS",
                callback=_scheduler,
                help="Run the tests on the workers of the Dask cluster at ADDRESS "
                "(tcp://HOST:PORT; needs ddchange[dask] here and on the workers), as many at "
                "once as it has threads (or -j N).",
            ),
            click.option(
                "--worker-clone",
                metavar="URL",
                help="With --scheduler: the workers clone URL (it must hold GOOD) instead of "
                "receiving a bundle of GOOD from here.",
            ),
            _output_options,
        ]
    ):
        command = option(command)
    return command


HELP = ("-h", "--help")


class RangeGroup(click.Group):
    """Routes `ddchange GOOD..BAD -- CMD` to the `run` command; subcommands keep their names.
    `-C PATH` may come first, before the command, as git takes it (`ddchange -C R log`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        where, args = _leading_directory(args)
        if args and args[0] not in self.commands and args[0] not in (*HELP, "--version"):
            args = ["run", *args]
        if where is not None and args and args[0] in self.commands:
            takes = any("-C" in p.opts for p in self.commands[args[0]].params)
            if takes:
                args = [args[0], "-C", where, *args[1:]]
            elif not Path(where).is_dir():  # as git's `-C`: the directory must be there
                raise click.UsageError(f"cannot change to {where!r}: no such directory", ctx)
        return super().parse_args(ctx, args)


def _leading_directory(args: list[str]) -> tuple[str | None, list[str]]:
    """The `-C PATH` options before the command, joined as git joins them (`-C a -C b` is
    a/b), and the arguments after them."""
    where: Path | None = None
    while args and args[0].startswith("-C") and (len(args) > 1 or args[0] != "-C"):
        value, args = (args[1], args[2:]) if args[0] == "-C" else (args[0][2:], args[1:])
        where = Path(value) if where is None else where / value
    return (None if where is None else str(where)), args


def _parse_range(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, str]:
    """GOOD..BAD, where an empty side is HEAD, as git reads it (`v1.0..` is v1.0..HEAD)."""
    good, sep, bad = value.partition("..")
    if not sep or not (good or bad) or bad.startswith("."):
        raise click.BadParameter(
            f"expected GOOD..BAD (two revisions and '..'; an empty one is HEAD), got {value!r}"
        )
    return good or "HEAD", bad or "HEAD"


def _check_finite(ctx: click.Context, param: click.Parameter, value: float | None) -> Any:
    if value is not None and value != value:  # NaN passes every range check
        raise click.BadParameter("not a number")
    return value


MAX_TIMEOUT = model.MAX_TIMEOUT


def _check_pattern(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as error:
            raise click.BadParameter(f"not a regular expression: {error}") from None
    return value


def _check_names(
    ctx: click.Context, param: click.Parameter, value: tuple[str, ...]
) -> tuple[str, ...]:
    for name in value:
        if not name or "=" in name or "\0" in name:
            raise click.BadParameter(f"{name!r} is not the name of an environment variable")
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
@_timeout_option("Kill build or test after this long (its whole process group); counts unresolved.")
@_fail_pattern_option(
    "The output must also match (searched in its last 1 MiB); with --results, each test's "
    "failure message."
)
@click.option(
    "--granularity",
    type=click.Choice([level.value for level in model.GRANULARITIES]),
    default="block",
    show_default=True,
    help="The finest level the answer is 1-minimal at.",
)
@click.option(
    "--strategy",
    type=click.Choice([strategy.value for strategy in model.STRATEGIES]),
    default=None,
    help="auto (the default): bisect the first-parent history like git bisect, then search "
    "inside the first bad commit against its parent (with --results, per failing test); "
    "diff: search all of GOOD..BAD; history: prefixes of GOOD..BAD's commits first.",
)
@click.option(
    "--isolate/--minimize",
    default=False,
    help="isolate: a passing and a failing set whose difference is 1-minimal (dd, fewer tests); "
    "minimize (default): a 1-minimal failing set (probabilistic delta debugging).",
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
@_confidence_option(
    "How sure the answer must be against a test that fails at random in up to 1 run of 4: "
    "the answer is run again until a wrong one would come through less often than 1 - this."
)
@click.option(
    "--keep",
    multiple=True,
    metavar="PATHSPEC",
    help="Always apply the changes there, as in BAD (a git pathspec; repeatable): not searched.",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="PATHSPEC",
    help="Never apply the changes there, they stay as in GOOD (repeatable): not searched.",
)
@click.option(
    "--env-key",
    multiple=True,
    metavar="NAME",
    callback=_check_names,
    help="The test depends on environment variable NAME (repeatable): a run with another "
    "value of it is another run, and does not resume this one.",
)
@click.option(
    "--clean",
    is_flag=True,
    help="Remove untracked and ignored files (git clean -fdx) before each test, for builds that "
    "cannot build incrementally.",
)
@click.option(
    "--results",
    multiple=True,
    metavar="junit:PATH|tap",
    help="Triage the whole suite: each run's per-test results are in PATH (JUnit XML; a glob "
    "relative to where the test runs; repeatable) or on its output (TAP). One search per test "
    "that passes at GOOD and fails at BAD, sharing runs; the causes, each with its tests.",
)
@click.option(
    "--test",
    "tests",
    multiple=True,
    metavar="GLOB",
    help="With --results: search only the failing tests whose ids match (repeatable).",
)
@click.option(
    "--patch-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="With --results: write one patch per cause there (cause-1.patch, ...).",
)
@_common_options
def run(
    revisions: tuple[str, str],
    command: tuple[str, ...],
    build: str | None,
    timeout: float | None,
    fail_pattern: str | None,
    granularity: str,
    strategy: str | None,
    isolate: bool,
    no_dependencies: bool,
    no_monotony: bool,
    retries: int,
    no_confirm: bool,
    confidence: float,
    keep: tuple[str, ...],
    ignore: tuple[str, ...],
    env_key: tuple[str, ...],
    clean: bool,
    results: tuple[str, ...],
    tests: tuple[str, ...],
    patch_dir: Path | None,
    repo: Path,
    jobs: int,
    scheduler: str | None,
    worker_clone: str | None,
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
    _needs_scheduler(scheduler, worker_clone)
    request = model.Request(
        repo=repo,
        good=revisions[0],
        bad=revisions[1],
        test=command,
        build=build,
        timeout=timeout,
        fail_pattern=fail_pattern,
        monotony=not no_monotony,
        granularity=model.Level(granularity),
        dependencies=not no_dependencies,
        strategy=model.Strategy(strategy or "auto"),
        isolate=isolate,
        retries=retries,
        confirm=not no_confirm,
        confidence=confidence,
        clean=clean,
        keep=keep,
        ignore=ignore,
        env_key=env_key,
        jobs=jobs,
        scheduler=scheduler,
        worker_clone=worker_clone,
        results=results,
        tests=tests,
    )
    files = outputs.Outputs(patch_file, json_file, html_file)
    if results or tests or patch_dir:
        triaged = outputs.triage(request, files, patch_dir, quiet=quiet, verbose=verbose)
        sys.exit(outputs.exit_code(triaged.outcome, disagreed=triaged.disagreed))
    outputs.validate(request, files)
    from ddchange import session

    result = outputs.search(
        lambda show: session.run(request, show),
        quiet,
        verbose,
        granularity=model.Level(granularity),
        resumable=True,
    )
    outputs.finish(result, files)


class _FilesThenCommand(click.Command):
    """`FILE... [options] -- CMD [ARGS...]`: what comes after the first `--` is the command,
    kept apart before click reads the rest (both are variadic)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta["command"] = tuple(args[at + 1 :])
            args = args[:at]
        return super().parse_args(ctx, args)


@cli.command(cls=_FilesThenCommand, epilog=EXIT_CODES_HELP)
@click.argument("files", metavar="FILE... -- CMD [ARGS]...", nargs=-1, required=True)
@click.option(
    "--granularity",
    type=click.Choice([grain.value for grain in model.Grain]),
    default=model.Grain.TOKEN.value,
    show_default=True,
    help="The finest pieces taken out: the result is 1-minimal in them (node: syntax nodes, "
    "where a grammar knows the file; then lines, tokens, characters).",
)
@click.option(
    "--interesting-exit",
    type=click.IntRange(min=0, max=255),
    metavar="CODE",
    help="The input is interesting (kept) where CMD exits with CODE, any other exit not: "
    "0 for the scripts of C-Vise, C-Reduce and shrinkray. Default: git bisect run's rules, "
    "the input kept where CMD fails as it does on the original (the same exit code, 1-127).",
)
@_fail_pattern_option("The output must also match (searched in its last 1 MiB).")
@_timeout_option("Kill the test after this long (its whole process group); the input is not kept.")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With one FILE: write its result here (default: FILE.reduced).",
)
@click.option(
    "--in-place",
    is_flag=True,
    help="Write each result over its FILE, the original kept as FILE.orig.",
)
@click.option("--no-confirm", is_flag=True, help="Skip re-running the result at the end.")
@_confidence_option("How sure the result must be to fail: it runs again at the end until it is.")
@_jobs_option(
    f"Test up to N inputs at once (auto: one per usable core; at most {MAX_JOBS}), the ones "
    "the reduction would test next. The result and the journal are the same for every N."
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    callback=_scheduler,
    help="Run the tests on the workers of the Dask cluster at ADDRESS (tcp://HOST:PORT; needs "
    "ddchange[dask] here and on the workers, and CMD there), as many at once as it has "
    "threads (or -j N).",
)
@_json_option
@click.option(
    "--report",
    "html_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write a self-contained HTML report (before and after, each pass, a plot of the size "
    "of each input tested).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary.")
@click.option("--verbose", "-v", is_flag=True, help="One line for every test.")
@click.pass_context
def reduce(
    ctx: click.Context,
    files: tuple[str, ...],
    granularity: str,
    interesting_exit: int | None,
    fail_pattern: str | None,
    timeout: float | None,
    output: Path | None,
    in_place: bool,
    no_confirm: bool,
    confidence: float,
    jobs: int,
    scheduler: str | None,
    json_file: Path | None,
    html_file: Path | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Reduce input FILEs that make CMD fail to a 1-minimal input that still does.

    CMD runs in a new scratch directory for each test, holding the FILEs at their paths
    relative to this directory and nothing else (an argument that names another file here is
    given as its absolute path). Your FILEs are only read: each result goes to FILE.reduced,
    written anew each time a smaller input fails. Running the same command again resumes.
    """
    command = ctx.meta.get("command", ())
    if not command:
        raise click.UsageError("no command: put it after `--`, as in `reduce FILE -- CMD`", ctx)
    if output is not None and (len(files) != 1 or in_place):
        raise click.UsageError("--output takes one FILE, and not with --in-place", ctx)
    from ddchange import runs

    root = Path.cwd()
    paths = tuple(Path(os.path.abspath(name)) for name in files)
    request = model.ReduceRequest(
        files=paths,
        root=root,
        test=runs.absolute_arguments(command, root, paths),
        timeout=timeout,
        fail_pattern=fail_pattern,
        interesting_exit=interesting_exit,
        granularity=model.Grain(granularity),
        output=None if output is None else Path(os.path.abspath(output)),
        in_place=in_place,
        confirm=not no_confirm,
        confidence=confidence,
        jobs=jobs,
        scheduler=scheduler,
    )
    written = outputs.Outputs(None, json_file, html_file)
    sys.exit(outputs.reduce(request, written, quiet=quiet, verbose=verbose))


@cli.command()
@click.argument("log_file", metavar="FILE", type=click.Path(exists=True, dir_okay=False))
@_common_options
def replay(
    log_file: str,
    repo: Path,
    jobs: int,
    scheduler: str | None,
    worker_clone: str | None,
    patch_file: Path | None,
    json_file: Path | None,
    html_file: Path | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Replay a `ddchange log` FILE (edited or not), then continue that search (with -j N or
    --scheduler too: the journal is the same for every N)."""
    import dataclasses

    from ddchange import runs, session

    logged = runs.read_log(Path(log_file), repo)
    (first, records), inside = logged[0], logged[1:]
    _needs_scheduler(scheduler, worker_clone)
    request = dataclasses.replace(first, jobs=jobs, scheduler=scheduler, worker_clone=worker_clone)
    if not quiet:  # a log is anyone's: what it will run, before it runs anything
        build = f"build `{request.build}`, then " if request.build else ""
        click.echo(
            printable(
                f"ddchange: replaying {log_file}: {request.good[:12]}..{request.bad[:12]}, "
                f"{build}test `{shlex.join(request.test)}` in {request.repo}"
            ),
            err=True,
        )
    files = outputs.Outputs(patch_file, json_file, html_file)
    if request.results:  # a whole suite's log: its records, then the triage goes on
        triaged = outputs.triage(
            request, files, None, quiet=quiet, verbose=verbose, logged=[(request, records), *inside]
        )
        sys.exit(outputs.exit_code(triaged.outcome, disagreed=triaged.disagreed))
    outputs.validate(request, files)
    result = outputs.search(
        lambda show: session.replay([(request, records), *inside], show),
        quiet,
        verbose,
        granularity=request.granularity,
        resumable=True,
    )
    outputs.finish(result, files)


@cli.command()
@_repository_option
@click.option("--all", "show_all", is_flag=True, help="Every run, not only the latest.")
def log(repo: Path, show_all: bool) -> None:
    """Print the history of the latest run (replayable with `ddchange replay`)."""
    from ddchange import runs
    from ddchange.report import testlog

    recorded = runs.history(repo) if show_all else runs.latest(repo)
    if not recorded:
        click.echo("ddchange: no runs recorded in this repository yet.", err=True)
        return
    for logged in recorded:
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
@click.option(
    "--keep",
    is_flag=True,
    help="Keep the generated repository, and print the command that searches it again there.",
)
@_output_options
def demo(
    name: str | None,
    list_only: bool,
    keep: bool,
    patch_file: Path | None,
    json_file: Path | None,
    html_file: Path | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Build a bundled sample repository and run the whole search on it, as `ddchange` with
    the command it prints would (in a new repository each time, removed at the end unless
    --keep)."""
    from ddchange import samples

    if list_only:
        for scenario in samples.scenarios():
            with _demo_repository(scenario, keep=False) as repo:
                figures = samples.figures(scenario, repo)
            click.echo(f"{scenario.name:13} {scenario.description} ({figures})")
        for input_name in samples.input_names():
            bundled = samples.load_input(input_name)
            click.echo(f"{input_name:13} {bundled.description} (`ddchange reduce`)")
        return
    if name in samples.input_names():
        if patch_file is not None:
            raise click.UsageError("--patch: a reduction writes FILE.reduced, not a patch")
        _demo_reduce(samples.load_input(name), outputs.Outputs(None, json_file, html_file),
                     keep=keep, quiet=quiet, verbose=verbose)  # fmt: skip
        return
    scenario = samples.load(name or samples.DEFAULT)
    files = outputs.Outputs(patch_file, json_file, html_file)
    files.check()
    with _demo_repository(scenario, keep=keep) as repo:
        _demo_search(scenario, repo, files, quiet, verbose)


@contextlib.contextmanager
def _demo_repository(scenario: samples.Scenario, *, keep: bool) -> Iterator[Path]:
    """A new repository built from `scenario` in a temporary directory, removed at the end
    unless `keep`: then the command that searches it again there is printed."""
    import shutil
    import tempfile

    from ddchange import samples

    workdir = Path(tempfile.mkdtemp(prefix="ddchange-demo-"))
    repo = workdir / scenario.name
    try:
        yield samples.build_repo(scenario, repo)
    finally:
        if keep:
            again = shlex.join(["ddchange", *samples.command(scenario)])
            click.echo(
                f"kept: {repo}; to search it again there (the same command resumes):\n"
                f"  cd {shlex.quote(str(repo))} && {again}",
                err=True,
            )
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def _demo_reduce(
    scenario: samples.InputScenario,
    files: outputs.Outputs,
    *,
    keep: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """A bundled input reduced in a new directory (removed at the end unless `keep`), as
    `ddchange reduce` there would; and whether the result is the scenario's."""
    import shutil
    import tempfile

    from ddchange import samples

    where = Path(tempfile.mkdtemp(prefix="ddchange-demo-"))
    try:
        for path in scenario.source.iterdir():
            if path.name != samples.SCENARIO_FILE:
                shutil.copy2(path, where / path.name)
        request = samples.reduce_request(scenario, where)
        if not quiet:
            click.echo(f"{scenario.name}: {scenario.description}", err=True)
            pattern = ["--fail-pattern", scenario.fail_pattern] if scenario.fail_pattern else []
            line = shlex.join(["ddchange", "reduce", *scenario.files, *pattern, "--",
                               *scenario.test])  # fmt: skip
            click.echo(f"in {where}: {line}", err=True)
        code = outputs.reduce(request, files, quiet=quiet, verbose=verbose)
        if code != Exit.FOUND:
            sys.exit(code)
        same = request.files[0].with_name(request.files[0].name + ".reduced").read_bytes()
        verdict = "matches" if same == scenario.expected else "DIFFERS FROM"
        click.echo(f"The result {verdict} the scenario's expected result.")
        if verdict != "matches":
            raise SystemExit(Exit.BUG)
        if keep:
            click.echo(f"kept: {where}")
    finally:
        if not keep:
            shutil.rmtree(where, ignore_errors=True)


def _demo_search(
    scenario: samples.Scenario, repo: Path, files: outputs.Outputs, quiet: bool, verbose: bool
) -> None:
    """The search of the demo, its files, and whether its answer is the scenario's."""
    from ddchange import samples, session

    if not quiet:
        click.echo(f"{scenario.name}: {scenario.description}", err=True)
        click.echo(f"repository: {repo}  ({samples.figures(scenario, repo)})", err=True)
        click.echo(f"the search: ddchange {shlex.join(samples.command(scenario))}", err=True)
    request = samples.request(scenario, repo)
    if scenario.causes:
        triaged = outputs.triage(request, files, None, quiet=quiet, verbose=verbose)
        code = outputs.exit_code(triaged.outcome, disagreed=triaged.disagreed)
        if code != Exit.FOUND:
            sys.exit(code)
        same = samples.causes_match(scenario, triaged)
        click.echo(f"The causes {'match' if same else 'DIFFER FROM'} the scenario's causes.")
        if not same:
            raise SystemExit(Exit.BUG)
        return
    result = outputs.search(
        lambda show: session.run(request, show), quiet, verbose, granularity=request.granularity
    )
    outputs.finish(result, files, resumable=False)  # exits unless the answer was found
    verdict = (
        "matches"
        if samples.matches(scenario, samples.answer(result), inside=result.route.inside)
        else "DIFFERS FROM"
    )
    click.echo(f"The answer {verdict} the scenario's expected answer.")
    if verdict != "matches":
        raise SystemExit(Exit.BUG)


@contextlib.contextmanager
def _signals_as_interrupt() -> Iterator[None]:
    """SIGTERM, SIGHUP, SIGQUIT and SIGUSR1 unwind like Ctrl-C (`errors.STOPPING_SIGNALS`), so
    every `finally` (the test's process group stopped, the worktree removed) still runs."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    others = [number for number in errors.STOPPING_SIGNALS if number != signal.SIGINT]
    previous = {number: signal.signal(number, interrupt) for number in others}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _usage_message(error: click.UsageError) -> str:
    """A usage error in one line, with what to do; an unknown option of `run` that is no typo
    of one of its own (click then says "Did you mean") is most often the test command's own,
    given without the `--` before it."""
    where = f"`{error.ctx.command_path} -h`" if error.ctx else "`ddchange -h`"
    if (
        isinstance(error, click.NoSuchOption)
        and not error.possibilities
        and error.ctx
        and error.ctx.command is run
    ):
        unknown = error.format_message().rstrip(".")
        return (
            f"{unknown}; if it is the test command's, put `--` before the command: "
            f"`ddchange GOOD..BAD [options] -- CMD {error.option_name} ...` (see {where})"
        )
    return f"{error.format_message()} (see {where})"


def main(argv: list[str] | None = None) -> Any:
    """Console entry point for `ddchange` and `git-ddchange`. Once the command is over (its
    answer printed and its files written, or its error said), a stop signal has nothing left
    to stop: it is ignored, so that it cannot turn a finished run into a death by signal; one
    that comes while the end is being said ends it as interrupted (exit 130)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        sys.exit(Exit.INTERRUPTED)
    finally:
        for number in errors.STOPPING_SIGNALS:
            signal.signal(number, signal.SIG_IGN)


def _main(argv: list[str] | None) -> Any:
    # Diffs of non-UTF-8 files carry their bytes as surrogate escapes: print them as those bytes
    # rather than fail on a strictly UTF-8 terminal.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="surrogateescape")
    try:
        with _signals_as_interrupt():
            return cli.main(args=argv, prog_name="ddchange", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as error:  # plain `ddchange`: its help, as git
        click.echo(error.format_message(), err=True)
        sys.exit(Exit.USAGE)
    except click.UsageError as error:  # one line, like every other error, and what to do
        click.echo(printable(f"ddchange: {_usage_message(error)}"), err=True)
        sys.exit(Exit.USAGE)
    except click.ClickException as error:
        error.show()
        sys.exit(Exit.USAGE)
    except (click.Abort, KeyboardInterrupt):
        click.echo("ddchange: interrupted; your repository is unchanged.", err=True)
        sys.exit(Exit.INTERRUPTED)
    except errors.DDChangeError as error:
        click.echo(printable(f"ddchange: {explain(error)}"), err=True)
        sys.exit(error.exit)
    except OSError as error:
        click.echo(
            printable(f"ddchange: {error.strerror or error}: {error.filename or ''}"), err=True
        )
        sys.exit(Exit.NOT_REPRODUCED)
    except Exception:
        import traceback

        click.echo("ddchange: internal error (a bug): please report this:", err=True)
        click.echo(printable(traceback.format_exc(limit=-3)), err=True)
        sys.exit(Exit.BUG)
