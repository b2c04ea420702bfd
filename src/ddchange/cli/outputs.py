"""A search as the command line runs it: what is checked before the first test, the search
with its progress display and report, and the files and exit code at the end.

Owns the edges of one `run` or `replay`: the output files (`--patch`, `--json`, `--report`)
and the test's program are checked before anything runs (`validate`); Ctrl-C ends with the
exact command that resumes (`search`); the files are written and the exit code chosen from the
result's outcome (`finish`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ddchange import errors, model
from ddchange.errors import Exit
from ddchange.report.words import base_relation, plural

if TYPE_CHECKING:
    from ddchange.session import Listener


def search(
    start: Callable[[Listener], model.Result],
    quiet: bool,
    verbose: bool,
    *,
    granularity: str,
    resumable: bool = False,
) -> model.Result:
    """Run a search with the progress display (sizes in the units of `granularity`), and print
    its report; a `resumable` one stopped by Ctrl-C (in the search, or before it) ends with the
    command that resumes it."""
    from ddchange.cli.display import display
    from ddchange.report import text, words

    resume = _resume()
    try:
        with display(quiet=quiet, verbose=verbose, unit=words.unit(granularity)) as listener:
            result = start(listener)
    except KeyboardInterrupt:
        if not resumable:
            raise
        click.echo(
            "ddchange: interrupted before an answer could be reported; your repository is "
            f"unchanged. {resume}",
            err=True,
        )
        sys.exit(Exit.INTERRUPTED)
    click.echo(text.render(result), nl=False)
    if result.outcome == model.Ending.INTERRUPTED and resumable:
        click.echo(resume)
    return result


def _resume() -> str:
    """What an interrupted run says last: the command that resumes it."""
    return f"To resume, run the same command again here: {_invocation()}"


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

    def named(self) -> list[tuple[str, Path]]:
        """(option, path) of each file asked for."""
        files = (("--patch", self.patch), ("--json", self.json), ("--report", self.html))
        return [(option, path) for option, path in files if path is not None]

    def check(self) -> None:
        """Each file can be written, and no two options name the same one."""
        seen: dict[Path, str] = {}
        for option, path in self.named():
            problem = _unwritable(path)
            if problem is not None:
                raise errors.UnwritableOutput(option, path, problem)
            same = seen.setdefault(path.resolve(), option)
            if same != option:
                raise errors.SameOutput((same, option), path)


def validate(request: model.Request, outputs: Outputs) -> None:
    """What can be checked before the first test: the output files can be written, and the
    test's program (a name without a slash) is on PATH. The revisions and -C are checked by
    the session before the first test too (they are needed to read the diff)."""
    outputs.check()
    program = request.test[0]
    if "/" not in program and shutil.which(program) is None:
        raise errors.ProgramNotFound(program)


def _no_directory(path: Path) -> str | None:
    """Why `path` cannot be (made) a directory to write files in, or None: checked before the
    first test, not after the whole triage."""
    if path.exists() or path.is_symlink():
        if not path.is_dir():
            return "it is not a directory"
        return None if os.access(path, os.W_OK) else "permission denied"
    above = path.absolute().parent
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir():
        return f"{above} is not a directory"
    return None if os.access(above, os.W_OK) else f"permission denied in {above}"


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


def finish(result: model.Result, outputs: Outputs, *, resumable: bool = True) -> None:
    """Write the requested files, then exit with the code the result's outcome calls for.
    A file that cannot be written (a disk full since `validate`) is named, after the others
    are written; `resumable` says whether the same command takes the tests from the journal."""
    failed = None
    for option, path in outputs.named():
        try:
            _write(option, path, result)
        except OSError as error:
            failed = failed or errors.OutputFailed(
                option=option,
                path=path,
                problem=error.strerror or str(error),
                resumable=resumable,
            )
    if failed is not None:
        raise failed
    code = exit_code(result.outcome, disagreed=bool(result.disagreements))
    if code != Exit.FOUND:
        sys.exit(code)


def _base(result: model.Result) -> str:
    """What the patch applies on: GOOD, or the commit the search inside the history went on
    from (`words.base_relation`)."""
    relation = base_relation(result)
    if relation is None:
        return "GOOD"
    if relation != "the last good commit":
        relation = f"the {relation} of the first bad commit"
    return f"{result.revisions.good[:12]} ({relation})"


def _write(option: str, path: Path, result: model.Result) -> None:
    """Write the file of one output option, and say where it is."""
    if option == "--patch":
        path.write_bytes(result.patch)
        click.echo(f"patch: {path} (apply on {_base(result)} with `git apply {path}`)", err=True)
    elif option == "--json":
        from ddchange.report import as_json

        path.write_text(as_json.render(result))
    else:
        from ddchange.report import html  # jinja2 and the page's template: 60 ms to load

        path.write_text(html.render(result), encoding="utf-8")
        click.echo(f"report: {path} (open it in a browser)", err=True)


def triage(
    request: model.Request,
    files: Outputs,
    patch_dir: Path | None,
    *,
    quiet: bool,
    verbose: bool,
    logged: list[tuple[model.Request, list[model.TestRecord]]] | None = None,
) -> model.SuiteResult:
    """A whole suite triaged (--results): its checks before the first test, progress, the
    report, --json and --patch-dir (see `exit_code` for the end); with `logged` (a replayed
    log: each run's request and records), those in place of the journal's first."""
    if not request.results:
        raise errors.NeedsResults("--test" if request.tests else "--patch-dir")
    from ddchange.trial import results

    for spec in request.results:
        try:
            results.parse_source(spec)
        except ValueError as problem:
            raise errors.BadResults(spec, str(problem)) from None
    validate(request, files)
    if patch_dir is not None and (why := _no_directory(patch_dir)) is not None:
        raise errors.UnwritableOutput("--patch-dir", patch_dir, why)
    from ddchange import suite
    from ddchange.report import suite as report

    def progress(record: model.TestRecord, target: model.Target | None, far: str) -> None:
        """One line per real run: for the test being searched, its outcome; outside a search,
        how many tests failed."""
        if quiet:
            return
        if record.cases is None:
            said = f"UNRESOLVED {record.reason}"
        elif target is None:
            failing = sum(c.status in (model.Status.FAIL, model.Status.ERROR)
                          for c in record.cases.values())  # fmt: skip
            said = f"{failing} of {len(record.cases)} failing"
        else:
            said = f"{suite.verdict(record, target).value.upper():<10} {target.name} ({far})"
        why = f"  ({record.reason})" if verbose and record.cases is not None else ""
        click.echo(
            f"test {record.number:>4} {record.phase:>8}: "
            f"{plural(len(record.config), 'change'):>11} -> "
            f"{said}{why}",
            err=True,
        )

    try:
        if logged is not None:
            from ddchange import session

            for run, records in logged:
                session.put_records(run, records)
        result = suite.run(request, progress)
    except KeyboardInterrupt:
        click.echo(
            "ddchange: interrupted before an answer could be reported; your repository is "
            f"unchanged. {_resume()}",
            err=True,
        )
        sys.exit(Exit.INTERRUPTED)
    click.echo(report.render(result), nl=False)
    if result.outcome == model.Ending.INTERRUPTED:
        click.echo(_resume())
    if files.json is not None:
        files.json.write_text(report.render_json(result))
    if files.html is not None:
        from ddchange.report import html

        files.html.write_text(html.render_suite(result), encoding="utf-8")
        click.echo(f"report: {files.html} (open it in a browser)", err=True)
    if patch_dir is not None:
        patch_dir.mkdir(parents=True, exist_ok=True)
        for number, found in enumerate(result.changes, 1):
            (patch_dir / f"cause-{number}.patch").write_bytes(found.patch)
        bases = {found.base for found in result.changes}
        on = (
            "GOOD"
            if bases <= {result.revisions.good}
            else f"{'its' if len(bases) == 1 else 'each its own'} first bad commit's parent, "
            "which the report names"
        )
        written = {
            0: f"patches: none written to {patch_dir} (no cause)",
            1: f"patch: {patch_dir}/cause-1.patch (apply it on {on} with `git apply`)",
        }
        click.echo(
            written.get(
                len(result.changes),
                f"patches: {patch_dir}/cause-1.patch … cause-{len(result.changes)}.patch "
                f"(apply them on {on} with `git apply`)",
            ),
            err=True,
        )
    if files.patch is not None:  # last: where it cannot be written, the rest is
        _all_causes(files.patch, result)
    return result


def _all_causes(path: Path, result: model.SuiteResult) -> None:
    """--patch with --results: every cause's changes in one patch, where they apply on one
    commit; else the causes apply each on its own first bad commit's parent (exit 2, the rest
    written: the same command with --patch-dir takes every test from the journal)."""
    if result.patch is None and result.changes:
        raise errors.CausesApart(len({found.base for found in result.changes}))
    if result.patch is None:
        click.echo(f"patch: none written to {path} (no cause)", err=True)
        return
    path.write_bytes(result.patch)
    base = result.changes[0].base
    on = "GOOD" if base == result.revisions.good else f"{base[:12]}, which the report names"
    click.echo(f"patch: {path}, every cause (apply it on {on} with `git apply`)", err=True)


def exit_code(outcome: model.Ending, *, disagreed: bool) -> int:
    """The exit code for how a search or a triage ended: 5 for an answer found where runs
    of the same changes `disagreed` (a test that fails at random), backed all the same."""
    if outcome == model.Ending.FOUND and disagreed:
        return Exit.FOUND_FLAKY
    return {
        model.Ending.FOUND: Exit.FOUND,
        model.Ending.FLAKY: Exit.FLAKY,
        model.Ending.INTERRUPTED: Exit.INTERRUPTED,
    }[outcome]


def reduce(request: model.ReduceRequest, files: Outputs, *, quiet: bool, verbose: bool) -> int:
    """A reduction, its progress on stderr, its summary, --json and --report; the exit code."""
    from ddchange import events, reduction
    from ddchange.diff.inputs import size
    from ddchange.report import reduced
    from ddchange.search import confidence

    files.check()
    program = request.test[0]
    if "/" not in program and shutil.which(program) is None:
        raise errors.ProgramNotFound(program)
    count, searched, phase = [0], [0], [""]
    start = sum(path.stat().st_size for path in request.files if path.is_file())
    reruns = confidence.runs_to_confirm(request.confidence, 0.0) - 1 if request.confirm else 0

    def show(event: model.TestRecord | tuple[bytes, ...]) -> None:
        if isinstance(event, model.TestRecord):
            count[0] += 1
            searched[0] += event.phase not in (model.Stage.BAD, model.Stage.CONFIRM)
            phase[0] = str(event.phase)
            if verbose:
                click.echo(
                    f"test {count[0]} ({event.phase}): {event.outcome.value.upper()}, "
                    f"{event.reason}",
                    err=True,
                )
        elif not quiet:
            now = size(event)
            left = events.reduce_estimate(searched[0], now, start, reruns)
            click.echo(
                f"reduce: {now:,} of {start:,} bytes ({100 * now / max(start, 1):.1f}%) after "
                f"{plural(count[0], 'test')}, pass {phase[0]}; about "
                f"{plural(left.likely, 'test')} left ({left.low}-{left.high}, {model.WITHIN})",
                err=True,
            )

    result = reduction.run(request, show)
    click.echo(reduced.render(result), nl=False)
    if files.json is not None:
        files.json.write_text(reduced.render_json(result))
    if files.html is not None:
        from ddchange.report import html

        files.html.write_text(html.render_reduction(result))
    return exit_code(result.outcome, disagreed=result.disagreed)
