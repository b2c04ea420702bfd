"""Runs ahead: with `-j N`, up to N configurations built and tested at once, in N places.

Owns the pool of places and threads, and nothing about outcomes. A place is a slot, 0 to N-1: a
scratch tree of this machine (`local`), or one worker thread of a Dask cluster
(`trial/cluster.py`); `Run` says how a configuration is run in it. The search says which
configurations it will ask about next (`offer`); free trees start on them. When the search
really asks (`take`), the run is taken from here, waited for if it is still going, or started
then; while the search waits, trees that free up start what the offer listed next. Only a run
that is taken becomes a record (trials.py records it then, in the order the search asks), so
the search sees the same outcomes in the same order for every N, and the journal holds the same
sequence of decisions. A run ahead that is never asked for is no outcome: it is counted
(`unused`), not recorded, and no claim rests on it.

Invariants:
- Each slot is used by one thread at a time: a slot is busy while its run is going, and the
  caller uses none of them meanwhile (locally, slot 0 is the run's own scratch tree, which the
  caller takes back only after `stop`).
- `stop` ends every run going (the `Stop` given: locally SIGTERM, a grace, SIGKILL, as Ctrl-C
  does) and forgets every run not taken; it is how a change of the ground rules (BAD's
  failure adopted, a commit's tree written), Ctrl-C and the end of the search leave the slots
  to the caller.
"""

from __future__ import annotations

import collections
import contextlib
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from dataclasses import dataclass

from ddchange import git
from ddchange.trial import runner
from ddchange.trial.worktree import Scratch, scratch_worktree

Config = frozenset[str]
# A run of one configuration in one slot: written there, built and tested.
Run = Callable[[int, Config], runner.Verdict]
# Ends every run going now, wherever it runs.
Stop = Callable[[], None]

# Runs ahead kept, finished and not taken, per slot: older ones are dropped (and counted as
# unused), so a long search does not hold every output it never asked for.
_KEPT_PER_SLOT = 4

# How long runs usually take here: the median of the last _LENGTHS_KEPT. A run within
# _NEARLY of that (a share of it) is about to end: see Ahead._settled.
_LENGTHS_KEPT = 16
_NEARLY = 0.1


class Stopped(Exception):
    """A run ahead that `stop` ended: before it began, or by stopping its command (then its
    exit code is our doing, not a verdict)."""


@dataclass(kw_only=True)
class _Job:
    config: Config
    slot: int
    future: futures.Future[runner.Verdict]
    started: float  # by the Ahead's clock


class Ahead:
    """Runs of configurations in `width` slots, one thread each; see the module docstring.
    How long runs take is read from `clock` (seconds)."""

    def __init__(
        self,
        width: int,
        run: Run,
        stop: Stop = runner.stop_all,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.width = width
        self._run, self._stop, self._clock = run, stop, clock
        self._pool = futures.ThreadPoolExecutor(width, "ddchange-run")
        self._jobs: list[_Job] = []  # not taken, in the order they started
        self._wanted: list[Config] = []  # what the last offer listed, less what was taken
        self._stopping = threading.Event()
        self.unused = 0  # runs made ahead that no one asked for
        self._lengths: collections.deque[float] = collections.deque(maxlen=_LENGTHS_KEPT)

    def running(self) -> int:
        """How many runs are going now."""
        return sum(not job.future.done() for job in self._jobs)

    def offer(self, upcoming: Sequence[Config]) -> list[Config]:
        """Start runs of the first of `upcoming` (in order; a configuration listed twice is
        run twice) that no run here holds yet, as long as slots are free; the ones started.
        The rest wait for slots that free up while the taker waits (`take`).

        Nothing starts while the first of `upcoming` has a run here that has ended or is
        about to (`_settled`): its taker has that outcome at once and offers again knowing
        more, so a run started now would likely be the stale one that holds a slot the next
        offer wants."""
        self._wanted = list(upcoming)
        if upcoming and self._settled(upcoming[0]):
            return []
        held = collections.Counter(job.config for job in self._jobs)
        return self._start_each(upcoming, held)

    def take(self, config: Config) -> runner.Verdict:
        """The verdict of a run of `config`: the first one held here, or a new one, waited for.
        While it goes on, each slot that frees up starts the next run the last offer listed
        after `config` (as that offer would have, had the slot been free), unless `config`'s
        run is about to end: then its taker offers again, knowing more. Raises what the run
        raised (a full disk, a test that asks to stop everything)."""
        if config in self._wanted:
            del self._wanted[: self._wanted.index(config) + 1]
        else:
            self._wanted.clear()  # the taker has left the course it offered
        job = next((job for job in self._jobs if job.config == config), None)
        if job is None:
            free = self._free()
            while not free:
                futures.wait([j.future for j in self._jobs], return_when=futures.FIRST_COMPLETED)
                free = self._free()
            job = self._start(config, free[0])
        while not job.future.done():
            going = [j.future for j in self._jobs if not j.future.done()]
            futures.wait(going, return_when=futures.FIRST_COMPLETED)
            if self._free() and not self._settled(config):
                others = collections.Counter(j.config for j in self._jobs if j is not job)
                self._start_each(self._wanted, others)
        self._jobs.remove(job)
        return job.future.result()

    def stop(self) -> None:
        """End every run going and forget every run not taken (see the module docstring)."""
        self._stopping.set()
        try:
            while not all(job.future.done() for job in self._jobs):
                self._stop()
                futures.wait([job.future for job in self._jobs], timeout=0.1)
        finally:
            self.unused += sum(_finished(job) for job in self._jobs)
            self._jobs.clear()
            self._wanted.clear()
            self._stopping.clear()

    def close(self) -> None:
        self.stop()
        self._pool.shutdown(wait=True)

    def _settled(self, config: Config) -> bool:
        """Whether the run `take` would give for `config` has ended, or has gone on for nearly
        as long as the usual run here (the median of the last ones): runs started together
        end together."""
        job = next((job for job in self._jobs if job.config == config), None)
        if job is None or job.future.done():
            return job is not None
        if not self._lengths:
            return False
        usual = statistics.median(self._lengths)
        return self._clock() - job.started >= (1 - _NEARLY) * usual

    def _start_each(
        self, configs: Sequence[Config], held: collections.Counter[Config]
    ) -> list[Config]:
        """Start those of `configs` that `held` (a count per configuration, used up here) has
        no run of, in order, while slots are free; the ones started."""
        free, started = self._free(), list[Config]()
        for config in configs:
            if held[config]:
                held[config] -= 1
            elif not free:
                break
            else:
                self._start(config, free.pop(0))
                started.append(config)
        return started

    def _free(self) -> list[int]:
        busy = {job.slot for job in self._jobs if not job.future.done()}
        return [slot for slot in range(self.width) if slot not in busy]

    def _start(self, config: Config, slot: int) -> _Job:
        job = _Job(
            config=config,
            slot=slot,
            future=self._pool.submit(self._guarded, slot, config),
            started=self._clock(),
        )
        self._jobs.append(job)
        done = [j for j in self._jobs if j.future.done()]
        for old in done[: max(len(done) - _KEPT_PER_SLOT * self.width, 0)]:
            self._jobs.remove(old)
            self.unused += _finished(old)
        return job

    def _guarded(self, slot: int, config: Config) -> runner.Verdict:
        if self._stopping.is_set():
            raise Stopped
        started = self._clock()
        verdict = self._run(slot, config)
        if self._stopping.is_set():  # `stop` ended it: a killed run, not a verdict
            raise Stopped
        self._lengths.append(self._clock() - started)
        return verdict


def _finished(job: _Job) -> bool:
    """Whether `job` ran to an end of its own: a verdict, not a stop."""
    return job.future.done() and not job.future.cancelled() and job.future.exception() is None


@contextlib.contextmanager
def local(
    repo: git.Repo, first: Scratch, count: int, run: Callable[[Scratch, Config], runner.Verdict]
) -> Iterator[Ahead]:
    """`count` slots on this machine: `first` and `count - 1` more scratch trees of the same
    GOOD (removed on exit), `run` in each; stopped and shut down on exit, whatever ends the
    block."""
    with contextlib.ExitStack() as stack:
        more = [stack.enter_context(scratch_worktree(repo, first.good)) for _ in range(count - 1)]
        trees = [first, *more]
        with running(Ahead(count, lambda slot, config: run(trees[slot], config))) as ahead:
            yield ahead


@contextlib.contextmanager
def running(ahead: Ahead) -> Iterator[Ahead]:
    """`ahead`, with commands shared among threads (`runner.sharing`), stopped and shut down
    on exit, whatever ends the block."""
    with runner.sharing():
        try:
            yield ahead
        finally:
            ahead.close()
