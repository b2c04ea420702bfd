"""The runs of one reduction (`ddchange reduce`): the only source of its outcomes.

Owns the scratch directory, running the test on a candidate input there, and the records: each
run is written to the journal the moment it ends, under the run's key, with the candidate's
content hash as its configuration. A candidate run before (in this process, or in an earlier
attempt of the same command) is answered by its records, never run again; so a reduction
stopped at any point and started again takes the same path, every step answered by the
journal, up to the first test it had not made.

Each test runs in a new directory of the scratch directory, holding the candidate's files at
their relative paths and nothing else, removed afterwards: what one test leaves behind cannot
change the next one's outcome. The user's files are only ever read (by the caller), never
written here.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from ddchange.diff.inputs import Contents, digest
from ddchange.model import Outcome, Phase, ReduceRequest, TestRecord
from ddchange.search import confidence
from ddchange.trial import runner
from ddchange.trial.journal import Journal
from ddchange.trial.runner import SCRATCH_VARIABLE, Execution, Expectation

if TYPE_CHECKING:
    from ddchange.trial.cluster import InputRuns

_PREFIX = "ddchange-reduce-"  # then the pid of the process whose scratch directory it is


def remove_stale() -> None:
    """Remove the scratch directories of reductions whose process is gone (killed with
    SIGKILL, say): they hold nothing but candidates."""
    for path in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        pid = path.name.removeprefix(_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)) and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


def run_candidate(
    test: Sequence[str],
    relative: Sequence[str],
    contents: Contents,
    timeout: float | None,
    parent: Path,
    begun: Callable[[Path], None] = lambda _here: None,
) -> Execution:
    """`test` run once on `contents`, its files written at their `relative` paths in a new
    directory of `parent` (told to `begun` before the test starts), removed afterwards: here,
    and on a Dask worker (trial/cluster.py)."""
    here = Path(tempfile.mkdtemp(dir=parent, prefix="test-"))
    try:
        for name, data in zip(relative, contents, strict=True):
            path = here / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        begun(here)
        env = {**os.environ, SCRATCH_VARIABLE: str(here)}
        return runner.run(test, here, timeout=timeout, env=env)
    finally:
        shutil.rmtree(here, ignore_errors=True)


class Inputs:
    """The scratch directory and the records of one reduction of `request`'s files (at
    `relative` paths), under journal key `key`, up to `jobs` tests at once. Use as a context
    manager: the runs still going are stopped and the directory goes at the end, whatever
    happened. With `request.scheduler` every test runs on that Dask cluster's workers, as many
    at once as it has threads (at most `jobs` above 1)."""

    def __init__(
        self,
        request: ReduceRequest,
        relative: Sequence[str],
        journal: Journal,
        key: str,
        on_record: Callable[[TestRecord], None] = lambda _record: None,
        jobs: int = 1,
    ) -> None:
        self.request, self.relative = request, tuple(relative)
        self.journal, self.key, self.on_record = journal, key, on_record
        self.expect = Expectation(
            pattern=re.compile(request.fail_pattern) if request.fail_pattern else None
        )
        self.log: list[TestRecord] = []
        self.by_input: dict[str, list[TestRecord]] = {}
        self.resumed = 0
        self.tests_run = 0
        self.jobs = jobs
        self._remote: InputRuns | None = None  # --scheduler: the tests run there
        self._scratch: Path | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._ahead: dict[str, Future[tuple[Outcome, str, Execution, float]]] = {}
        self._random: dict[str, tuple[int, int]] = {}  # input -> (runs, FAILs) where it passed
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Inputs:
        remove_stale()
        self._scratch = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
        if self.request.scheduler:
            from ddchange.trial import cluster  # it runs `run_candidate` on the workers

            self._remote = self._stack.enter_context(
                cluster.inputs_remote(
                    self.request.scheduler,
                    self.jobs,
                    self.request.test,
                    self.relative,
                    self.request.timeout,
                )
            )
            self.jobs = self._remote.slots
        elif self.jobs > 1:
            self._stack.enter_context(runner.sharing())
        if self.jobs > 1:
            self._pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="reduce")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._pool is not None:
            for future in self._ahead.values():
                future.cancel()
            if self._remote is not None:
                self._remote.stop()  # its commands on the cluster
            else:
                runner.stop_all()  # this process runs only its own tests
            self._pool.shutdown(wait=True)
        self._stack.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)

    def resume(self, description: str) -> None:
        """Take over the records of earlier attempts of this run (same key)."""
        self.journal.begin(self.key, description)
        for record in self.journal.records(self.key):
            self._keep(record)
        self.resumed = len(self.log)

    def expect_exit(self, code: int) -> None:
        """From now on a candidate fails only where the test exits with `code`, as the
        original did (the default, without --interesting-exit)."""
        self.expect = Expectation(exit_code=code, pattern=self.expect.pattern)

    def records(self, contents: Contents) -> list[TestRecord]:
        return self.by_input.get(digest(contents), [])

    def outcome(self, contents: Contents, phase: Phase) -> Outcome:
        """The outcome of `contents` by all its runs (search/confidence.py: a PASS is a fact),
        a new run where it has none; a FAIL the reduction acts on runs again until the flake
        rate seen asks no more (once: none, while no run has failed at random)."""
        records = self.records(contents) or [self.run(contents, phase)]
        while (
            outcome := confidence.outcome_of_runs([r.outcome for r in records])
        ) is Outcome.FAIL and len(records) < confidence.fails_needed(self.flake_rate()):
            records = [*records, self.run(contents, phase)]
        return outcome

    def flake_rate(self) -> float:
        """The rate at which the test fails at random, from the runs of inputs seen to pass."""
        runs = sum(seen[0] for seen in self._random.values())
        return confidence.flake_rate(sum(seen[1] for seen in self._random.values()), runs)

    def disagreed(self) -> bool:
        """Whether the runs of some input disagreed (a test that fails at random)."""
        return bool(self._random) or any(
            len({r.outcome for r in runs}) > 1 for runs in self.by_input.values() if len(runs) > 1
        )

    def offer(self, upcoming: Iterable[Contents]) -> None:
        """The candidates the reduction would ask about next, in order (`-j N`): the first ones
        not on record start now, up to N runs at once. A run made so is no record until the
        reduction asks for it (`run`): the records and the result are the same for every N."""
        if self._pool is None:
            return
        wanted = []
        for contents in upcoming:
            name = digest(contents)
            if name not in self.by_input and name not in wanted:
                wanted.append(name)
                if name not in self._ahead and self._busy() < self.jobs:
                    self._ahead[name] = self._pool.submit(self._execute, contents)
            if len(wanted) >= self.jobs:
                break
        for name in [n for n in self._ahead if n not in wanted]:
            if self._ahead[name].cancel() or self._ahead[name].done():
                del self._ahead[name]  # not asked for: never a record

    def run(self, contents: Contents, phase: Phase) -> TestRecord:
        """Run the test on `contents` once more (or take the run made ahead for it), and
        record it."""
        name = digest(contents)
        ahead = self._ahead.pop(name, None)
        outcome, reason, tested, duration = (
            ahead.result() if ahead is not None else self._execute(contents)
        )
        record = TestRecord(
            number=len(self.log) + 1,
            phase=phase,
            config=frozenset({name}),
            outcome=outcome,
            reason=reason,
            exit_code=tested.exit_code,
            duration=duration,
            tail=tested.tail,
        )
        self.journal.append(self.key, record)
        self.tests_run += 1
        self._keep(record)
        self.on_record(record)
        return record

    def _busy(self) -> int:
        return sum(not future.done() for future in self._ahead.values())

    def _execute(self, contents: Contents) -> tuple[Outcome, str, Execution, float]:
        """One run of the test on `contents`, in a new directory of its own (on a worker of
        the cluster, with --scheduler)."""
        assert self._scratch is not None, "Inputs is used as a context manager"
        started = time.monotonic()
        if self._remote is not None:
            tested = self._remote.run(contents)
        else:
            tested = run_candidate(
                self.request.test, self.relative, contents, self.request.timeout, self._scratch
            )
        outcome, reason = self._classify(tested)
        return outcome, reason, tested, time.monotonic() - started

    def _classify(self, tested: Execution) -> tuple[Outcome, str]:
        """`git bisect run`'s rules (runner.classify), or with --interesting-exit, C-Vise's: the
        input is interesting (it fails, and is kept) where the test exits with that code."""
        interesting = self.request.interesting_exit
        if interesting is None:
            return runner.classify(tested, self.expect)
        if tested.timed_out or tested.exit_code is None:
            return Outcome.UNRESOLVED, f"timed out after {tested.timeout:g}s"
        if tested.exit_code != interesting:
            return Outcome.PASS, f"exit {tested.exit_code}: not interesting"
        pattern = self.expect.pattern
        if pattern is not None and not pattern.search(tested.output):
            return Outcome.PASS, f"exit {tested.exit_code}, no match for {pattern.pattern!r}"
        return Outcome.FAIL, f"exit {tested.exit_code}: interesting"

    def _keep(self, record: TestRecord) -> None:
        self.log.append(record)
        for name in record.config:
            runs = self.by_input.setdefault(name, [])
            runs.append(record)
            if len(runs) > 1:  # its evidence of FAILs at random, kept up to date
                seen = confidence.at_random([r.outcome for r in runs])
                if seen[0]:
                    self._random[name] = seen
                else:
                    self._random.pop(name, None)
