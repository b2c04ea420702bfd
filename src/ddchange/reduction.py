"""The order of one reduction (`ddchange reduce FILE... -- CMD`): the files read, the run's
identity, the pre-flight, the passes down to the grain asked (search/reduce.py, every outcome
from trial/inputs.py), the result run again, and the outputs written.

The user's files are only read. The result goes to FILE.reduced (or --output), written anew
each time a smaller input fails, so that a run stopped any way leaves the best so far there;
with --in-place it goes over FILE, after FILE.orig holds the original (a FILE.orig that holds
something else is never overwritten: the run refuses before its first test).

A run's identity is the command, the files' relative paths and original bytes, and what decides
an outcome (--timeout, --fail-pattern, --interesting-exit): the same command on the same
inputs resumes from the journal (`journal_path`, in the user's cache directory, since inputs
need not lie in a repository), every test it made answered by its record.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ddchange import errors, runs
from ddchange.diff import inputs as pieces
from ddchange.diff.inputs import Contents, Edit
from ddchange.hierarchy.syntax import inputs as syntax
from ddchange.model import (
    Ending,
    Grain,
    Outcome,
    PassReport,
    ReduceRequest,
    Reduction,
    Rewrite,
    Stage,
    TestRecord,
)
from ddchange.search import confidence
from ddchange.search.reduce import Atoms, Pass, Reducer
from ddchange.trial.inputs import Inputs
from ddchange.trial.journal import Journal

# Told of every record as it is made, and of each new smallest input seen to fail.
Listener = Callable[[TestRecord | Contents], None]


def journal_path() -> Path:
    """The journal of every reduction of this user: in their cache directory."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "ddchange" / "reduce.sqlite"


def read_inputs(request: ReduceRequest) -> tuple[tuple[str, ...], Contents]:
    """Each file's path relative to the directory the test runs in, and its bytes; an
    `errors.UnreadableInput` for the first that cannot be read or lies outside it."""
    relative, contents = [], []
    for path in request.files:
        try:
            relative.append(path.relative_to(request.root).as_posix())
        except ValueError:
            raise errors.UnreadableInput(path, "not under this directory") from None
        try:
            contents.append(path.read_bytes())
        except FileNotFoundError:
            raise errors.UnreadableInput(path, "no such file") from None
        except IsADirectoryError:
            raise errors.UnreadableInput(path, "is a directory") from None
        except PermissionError:
            raise errors.UnreadableInput(path, "permission denied") from None
    return tuple(relative), tuple(contents)


def describe(request: ReduceRequest, relative: Sequence[str], contents: Contents) -> str:
    """What identifies the run, as JSON: its key is a hash of it."""
    return json.dumps(
        {
            "reduce": list(relative),
            "inputs": [hashlib.sha256(data).hexdigest() for data in contents],
            "test": list(request.test),
            "timeout": request.timeout,
            "fail_pattern": request.fail_pattern,
            "interesting_exit": request.interesting_exit,
            # the check script's content: an edited check is another run, none of its
            # earlier tests taken over
            "files": runs.named_files(request.test),
        },
        sort_keys=True,
    )


def outputs_of(request: ReduceRequest) -> tuple[Path, ...]:
    """Where each file's result goes: FILE.reduced, --output, or FILE itself (--in-place)."""
    if request.in_place:
        return request.files
    if request.output is not None:
        return (request.output,)
    return tuple(path.with_name(path.name + ".reduced") for path in request.files)


def run(request: ReduceRequest, listener: Listener | None = None) -> Reduction:
    """Reduce `request`'s files; raises an `errors.DDChangeError` when it cannot."""
    started = time.monotonic()
    tell = listener or (lambda _event: None)
    relative, original = read_inputs(request)
    if request.granularity is Grain.NODE and not any(syntax.has_tree(n) for n in relative):
        raise errors.NoGrammar(relative)
    outputs = outputs_of(request)
    if request.in_place:
        _keep_originals(request.files, original)
    description = describe(request, relative, original)
    key = hashlib.sha256(description.encode()).hexdigest()

    def best(contents: Contents) -> None:
        _write(outputs, contents)
        tell(contents)

    with (
        Journal(journal_path()) as journal,
        Inputs(request, relative, journal, key, on_record=tell, jobs=request.jobs) as runs,
    ):
        runs.resume(description)
        _preflight(request, runs, original)
        passes, finest, tidy, last = passes_for(request.granularity, relative)
        reducer = Reducer(
            test=runs.outcome,
            passes=passes,
            finest=finest,
            tidy=tidy,
            last=last,
            on_best=best,
            ahead=runs.offer,
            plausible=_well_formed(relative, original),
        )
        outcome = Ending.FLAKY
        for _ in range(confidence.MAX_SEARCHES):
            reduced = reducer.reduce(original)
            _write(outputs, reduced.contents)
            if reduced.stopped:
                outcome = Ending.INTERRUPTED
                break
            try:
                if not request.confirm or _confirmed(request, runs, reduced.contents):
                    outcome = Ending.FOUND
                    break
            except KeyboardInterrupt:
                outcome = Ending.INTERRUPTED
                break
            # The result passed when run again (a fact): a FAIL at random misled the reduction,
            # which goes again from the original, each FAIL now run as the flake rate asks.
        return Reduction(
            request=request,
            original=original,
            reduced=reduced.contents,
            outputs=outputs,
            passes=tuple(
                PassReport(name=name, tests=sum(r.phase == name for r in runs.log), saved=saved)
                for name, saved in reduced.saved.items()
            ),
            minimal=reduced.minimal,
            runs=len(runs.records(reduced.contents)),
            log=tuple(dataclasses.replace(r, number=n) for n, r in enumerate(runs.log, 1)),
            tests_run=runs.tests_run,
            resumed=runs.resumed,
            wall_time=time.monotonic() - started,
            outcome=outcome,
            disagreed=runs.disagreed(),
        )


def _preflight(request: ReduceRequest, runs: Inputs, original: Contents) -> None:
    """The original must fail as asked; by default, later candidates must then exit as it did."""
    record = (runs.records(original) or [runs.run(original, Stage.BAD)])[0]
    if record.outcome is not Outcome.FAIL:
        raise errors.InputNotFailing(
            verdict=record.outcome.value,
            reason=record.reason,
            tail=record.tail,
            interesting_exit=request.interesting_exit,
        )
    if request.interesting_exit is None and record.exit_code is not None:
        runs.expect_exit(record.exit_code)


def _confirmed(request: ReduceRequest, runs: Inputs, result: Contents) -> bool:
    """Whether the result failed in every run once run again as often as the confidence asks
    (at the larger of 1 in 4 and the flake rate seen, as an answer is); it stops at the first
    rerun that does not fail."""
    wanted = confidence.runs_to_confirm(request.confidence, runs.flake_rate())
    while len(runs.records(result)) < wanted:
        if runs.run(result, Stage.CONFIRM).outcome is not Outcome.FAIL:
            return False
    return all(r.outcome is Outcome.FAIL for r in runs.records(result))


def passes_for(
    finest: Grain, relative: Sequence[str]
) -> tuple[tuple[Pass, ...], Pass, tuple[Pass, ...], tuple[Pass, ...]]:
    """The passes, coarsest first, the one whose pieces the result is 1-minimal in, the
    rewrites that go again around its check (`Reducer.tidy`: the names the removals freed, the
    indentation they left uneven), and the passes after it (`Reducer.last`): syntax nodes
    where a grammar knows one of the files, lines, balanced brackets, the rewrites (names,
    indentation, white space, literals), tokens, characters; the grains finer than `finest`
    left out. At the token grain, words joined last: the characters' grain takes out such
    white space by itself. Then the literals again, a single digit too: a rewrite that the
    input around it refused before (a named bit-field's width as 0) may go once the removals
    have taken that out (the field's name)."""
    trees = [name for name in relative if syntax.has_tree(name)]
    grains = list(Grain)[: list(Grain).index(finest) + 1]
    by_grain = {
        Grain.NODE: Pass(name=Grain.NODE, rounds=_nodes(relative), each=_every_node(relative)),
        Grain.LINE: _grain(Grain.LINE, pieces.lines),
        Grain.TOKEN: _grain(Grain.TOKEN, pieces.words, fits=pieces.joins_none),
        Grain.CHAR: _grain(Grain.CHAR, pieces.chars),
    }
    rename, dedent = _renames(), Pass(name=Rewrite.DEDENT, rounds=_dedents, each=pieces.dedents)
    rewrites = (
        Pass(name=Rewrite.BRACKETS, rounds=_brackets),
        rename,
        dedent,
        _once(Rewrite.SPACE, pieces.spaces),
        _once(Rewrite.LITERAL, pieces.literals),
    )
    coarse = [by_grain[g] for g in grains if g in (Grain.NODE, Grain.LINE)]
    if not trees:
        coarse = [p for p in coarse if p.name != Grain.NODE]
    fine = [by_grain[g] for g in grains if g in (Grain.TOKEN, Grain.CHAR)]
    joins = (_once(Rewrite.JOIN, pieces.joins),) if finest is Grain.TOKEN else ()
    digits = _once(Rewrite.LITERAL, functools.partial(pieces.literals, digits=True), renews=True)
    return (*coarse, *rewrites, *fine), by_grain[finest], (rename, dedent), (*joins, digits)


# A grain with more pieces than this goes first by runs of consecutive pieces, this many at most
# (each run one edit): the search's work per test follows the atoms in play, so a 10 MB input
# costs about what a small one does a test, and one needed line of 300,000 is found in two
# short rounds.
CHUNKS = 1024


def _grain(
    grain: Grain,
    cut: Callable[[bytes], list[pieces.Span]],
    fits: Callable[[Contents, Contents], bool] = lambda _base, _candidate: True,
) -> Pass:
    """A grain's pass: each piece an atom; where there are more than CHUNKS, a round of runs
    of consecutive pieces first, made from the spans alone (a piece's `Edit` only where it is
    an atom of its own); `fits` as `Pass.fits`."""
    chunked = [False]

    def rounds(contents: Contents, number: int) -> Atoms | None:
        if number > 1 or (number == 1 and not chunked[0]):
            return None
        cuts = [cut(data) for data in contents]
        total = sum(len(spans) for spans in cuts)
        if number == 0 and total > CHUNKS:
            chunked[0] = True
            width = -(-total // CHUNKS)
            return [
                [Edit(file=n, start=spans[at][0], end=spans[min(at + width, len(spans)) - 1][1])]
                for n, spans in enumerate(cuts)
                for at in range(0, len(spans), width)
            ]
        return [[edit] for n, spans in enumerate(cuts) for edit in pieces.edits(n, spans)]

    return Pass(
        name=grain,
        rounds=rounds,
        each=lambda contents: [
            [edit] for n, data in enumerate(contents) for edit in pieces.edits(n, cut(data))
        ],
        fits=fits,
    )


def _once(rewrite: Rewrite, atoms: Callable[[Contents], Atoms], *, renews: bool = False) -> Pass:
    """A rewrite's pass: one round of the atoms it finds (`renews` as `Pass.renews`)."""
    return Pass(
        name=rewrite,
        rounds=lambda contents, number: None if number else atoms(contents),
        renews=renews,
    )


def _renames() -> Pass:
    """The names' pass: one round of the renames (`pieces.renames`); once the result is
    1-minimal, each name it has not offered yet (a name that found no shorter one free then,
    as `i9` beside twenty one-letter names, where removals have freed one since), alone."""
    offered: set[bytes] = set()

    def rounds(contents: Contents, number: int) -> Atoms | None:
        if number:
            return None
        atoms = pieces.renames(contents)
        offered.update(bytes(contents[a[0].file][a[0].start : a[0].end]) for a in atoms)
        return atoms

    return Pass(
        name=Rewrite.RENAME, rounds=rounds, each=lambda contents: pieces.renames(contents, offered)
    )


def _dedents(contents: Contents, number: int) -> Atoms | None:
    """Round 0: each file's lines indented by their depth; 1: by the file's unit, where depth
    did not go (`pieces.dedents`)."""
    return None if number > 1 else pieces.dedents(contents, by_depth=number == 0)


def _brackets(contents: Contents, number: int) -> Atoms | None:
    """Round 3k: the pairs k deep taken out with their content; 3k + 1: emptied; 3k + 2:
    unwrapped (the brackets taken out, their content kept)."""
    return pieces.brackets(contents, number // 3, keep=("", "brackets", "content")[number % 3])


def _nodes(relative: Sequence[str]) -> Callable[[Contents, int], Atoms | None]:
    """The node pass's rounds, as HDD and Perses go, three for each level k + 1 below the
    root: round 3k takes out its nodes (each with the comma after it, in a list), 3k + 1 the
    last elements of its lists with the comma before them, 3k + 2 replaces each of its nodes by
    the largest descendant the file still parses with (`syntax.hoists_at`); it ends below the
    deepest node."""

    def rounds(contents: Contents, number: int) -> Atoms | None:
        depth, kind = number // 3 + 1, number % 3
        atoms: Atoms = []
        deeper = False
        for n, (name, data) in enumerate(zip(relative, contents, strict=True)):
            if kind == 2:
                atoms += [
                    [Edit(file=n, start=start, end=end, replacement=data[inner:last])]
                    for start, end, inner, last in syntax.hoists_at(name, data, depth)
                ]
            elif kind == 1:
                atoms += [[edit] for edit in pieces.ranges(n, syntax.lasts_at(name, data, depth))]
            elif (spans := syntax.nodes_at(name, data, depth)) is not None:
                deeper = True
                atoms += [[edit] for edit in pieces.ranges(n, spans)]
        return atoms if kind or deeper else None

    return rounds


def _every_node(relative: Sequence[str]) -> Callable[[Contents], Atoms]:
    """Every node of every file with a tree, each an atom: the pieces `--granularity node`
    is 1-minimal in."""

    def each(contents: Contents) -> Atoms:
        return [
            [edit]
            for n, (name, data) in enumerate(zip(relative, contents, strict=True))
            for edit in pieces.ranges(n, syntax.every_node(name, data))
        ]

    return each


def _well_formed(relative: Sequence[str], original: Contents) -> Callable[[Contents], bool]:
    """Whether an input is worth a test while the passes go: each file whose original parses
    without an error by its grammar must still parse so (as Perses keeps a program in its
    grammar); where the original does not parse so, or no grammar knows the file, anything
    goes. The check of each piece at the end tests every removal all the same."""
    kept = [n for n, (name, data) in enumerate(zip(relative, original, strict=True))
            if syntax.parses(name, data)]  # fmt: skip

    def plausible(contents: Contents) -> bool:
        return all(syntax.parses(relative[n], contents[n]) for n in kept)

    return plausible


def _keep_originals(files: Sequence[Path], original: Contents) -> None:
    """--in-place: FILE.orig holds each original before FILE is written; one that holds
    something else already is never overwritten."""
    for path, data in zip(files, original, strict=True):
        backup = path.with_name(path.name + ".orig")
        if backup.exists() and backup.read_bytes() != data:
            raise errors.UnreadableInput(
                backup,
                f"exists and differs from {path.name}: if a reduction --in-place was stopped, "
                f"`mv {backup.name} {path.name}` and run it again (it resumes); else move "
                f"{backup.name} away",
            )
        _write_one(backup, data)


def _write(outputs: Sequence[Path], contents: Contents) -> None:
    for path, data in zip(outputs, contents, strict=True):
        _write_one(path, data)


def _write_one(path: Path, data: bytes) -> None:
    """`data` to `path` atomically: a stop leaves the old file or the new one, never half."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        mode = path.stat().st_mode if path.exists() else 0o666 & ~_umask()
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
