"""Runs on a Dask cluster (`--scheduler tcp://HOST:PORT`): each worker thread is a slot.

Owns what goes to the workers and what comes back; `ahead.py` decides what runs when, and a
run becomes a record only in trials.py, as for local runs, so the answer and the journal are
the same as with `-j N` on one machine.

- The repository goes once to each worker: a git bundle of GOOD with its tags, made in the
  scratch repository, inside the `Shipment` that every worker gets with the recipe (the diff,
  the commands, the pinned files), also a worker that joins during the run (`delivery.Delivery`,
  a worker plugin). With `source`, the workers clone that URL or path instead, and no bundle
  is made.
- Each worker thread keeps a clone of its own at GOOD (`_tree`), made on its first run, in
  the worker's own directory (`worktree.worker_directory`, in its temporary directory), and
  removed when the run ends (`forget`) or the worker exits. A worker killed before its exit
  handler leaves its directory behind: the next worker on that machine to begin or end a run
  removes it (`worktree.remove_dead_workers`), and stops the tests still running there.
- Per configuration, only its unit ids and the expected failure go; the verdict comes back with
  the end of the output (runner.OUTPUT_LIMIT), as a local run keeps it.
- A worker lost during a run: Dask runs the task again on another worker, or on the one
  started in its place; when it gives up (`KilledWorker`), when the task is cancelled (the
  cluster restarted), or when the scheduler is gone, the run stops (`errors.ClusterLost`):
  nothing is recorded, and the same command resumes. Never an outcome.
- A cluster left with no worker at all (each retired, or lost and not started again): a task
  would wait for one for ever, so a run that has waited `NO_WORKER_GRACE` seconds with none
  there stops (`errors.ClusterLost`), as above.
- Ctrl-C stops the commands of this run on every worker (`runner.stop_all` there), and
  cancels its tasks still on the cluster. Each call that cleans up on the cluster is bounded
  (`_bounded`).

`ddchange reduce --scheduler` sends no repository: each test takes the candidate's files
along (`inputs_remote`), and the worker runs it as a local run does, in a new directory of
its own (`_test_here`, by `inputs.run_candidate`); the test command must be there on the worker (a
check script named by its absolute path, as on this machine). Ctrl-C stops its commands, and
a lost worker or scheduler stops the run, as above.

The functions run on the workers (`_run_here`, `_test_here`, `_stop_here`, `receive`,
`forget`) are module-level, so that a worker with ddchange installed imports them by name.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ddchange import errors, git
from ddchange.trial import runner
from ddchange.trial.ahead import Ahead, running
from ddchange.trial.attempt import Recipe, attempt
from ddchange.trial.watch import Watch
from ddchange.trial.worktree import (
    Scratch,
    dispose,
    identity,
    remove_dead_workers,
    remove_scratch,
    scratch_directory,
    worker_directory,
)

Config = frozenset[str]


@dataclass(frozen=True, kw_only=True)
class Shipment:
    """What every worker gets once."""

    key: str  # this run's, unique: a worker's trees are kept per run
    good: str
    setup: git.CheckoutSetup
    recipe: Recipe
    bundle: bytes = b""  # GOOD and its tags, when `source` is not given
    source: str = ""  # a URL or path each worker clones instead


@contextlib.contextmanager
def remote(
    address: str,
    scratch: Scratch,
    recipe: Recipe,
    expectation: Callable[[], runner.Expectation],
    width: int,
    source: str = "",
) -> Iterator[Ahead]:
    """An `Ahead` whose slots are the threads of the Dask cluster at `address` (at most
    `width` of them when it is above 1), and the cluster cleaned of this run's trees on exit.
    `expectation` is the failure expected now (BAD's exit code, once the pre-flight has it).
    """
    from ddchange.trial.delivery import Delivery

    with _client(address) as client:
        tasks = _Tasks(client, address)
        try:
            shipment = Shipment(
                key=tasks.key,
                good=scratch.good,
                setup=git.checkout_setup(scratch.repo),
                recipe=recipe,
                bundle=_bundle(scratch, source),
                source=source,
            )
            client.register_plugin(Delivery(shipment), name=tasks.key)
            slots = tasks.slots(width)

            def run(_slot: int, config: Config) -> runner.Verdict:
                verdict: runner.Verdict = tasks.call(_run_here, config, expectation())
                return verdict

            with running(Ahead(slots, run, tasks.stop)) as ahead:
                yield ahead
        finally:
            _bounded(lambda: client.unregister_worker_plugin(tasks.key))  # each forgets the run


@dataclass(frozen=True, kw_only=True)
class InputRuns:
    """`ddchange reduce --scheduler`: `slots` tests at once, each run by `run` on a worker of
    the cluster (the candidate's files written there in a directory of their own); `stop`
    ends every command of this reduction on the cluster (Ctrl-C)."""

    slots: int
    run: Callable[[tuple[bytes, ...]], runner.Execution]
    stop: Callable[[], None]


@contextlib.contextmanager
def inputs_remote(
    address: str,
    width: int,
    test: tuple[str, ...],
    relative: tuple[str, ...],
    timeout: float | None,
) -> Iterator[InputRuns]:
    """A reduction's runs of `test` on the Dask cluster at `address` (at most `width` at once
    when it is above 1, else one per thread of the cluster): each worker writes the candidate
    at `relative` paths in a new directory and runs `test` there, as a local run does."""
    with _client(address) as client:
        tasks = _Tasks(client, address)

        def run(contents: tuple[bytes, ...]) -> runner.Execution:
            tested: runner.Execution = tasks.call(_test_here, test, relative, contents, timeout)
            return tested

        yield InputRuns(slots=tasks.slots(width), run=run, stop=tasks.stop)


@contextlib.contextmanager
def _client(address: str) -> Iterator[Any]:
    """A client of the Dask cluster at `address`, closed (bounded) on exit."""
    try:
        import distributed
    except ImportError:
        raise errors.DaskMissing() from None
    dask: Any = distributed  # untyped
    try:
        client = dask.Client(address, timeout=10, set_as_default=False)
    except (OSError, TimeoutError) as failure:
        raise errors.SchedulerUnreachable(address, str(failure)) from None
    try:
        yield client
    finally:
        _bounded(client.close)


class _Tasks:
    """One run's tasks on the cluster, under a key of its own: each submitted and waited for
    (`_result`: a lost worker or scheduler is no outcome), and all stopped at once."""

    def __init__(self, client: Any, address: str) -> None:
        self.client, self.address, self.key = client, address, uuid.uuid4().hex
        self.going: set[Any] = set()  # submitted, not yet done
        self.lock = threading.Lock()

    def slots(self, width: int) -> int:
        """The tests that may run at once: the cluster's threads, at most `width` above 1."""
        threads = sum(self.client.nthreads().values())
        slots = min(width, threads) if width > 1 else threads
        if slots < 1:
            raise errors.SchedulerUnreachable(self.address, "the cluster has no workers")
        return int(slots)

    def call(self, function: Callable[..., Any], *args: Any) -> Any:
        """`function(key, *args)` on a worker, its value once it is done."""
        submitted = self.client.submit(function, self.key, *args, pure=False)
        with self.lock:
            self.going.add(submitted)
        try:
            return _result(submitted, self.address, self._threads)
        finally:
            with self.lock:
                self.going.discard(submitted)

    def _threads(self) -> int:
        return int(sum(self.client.nthreads().values()))

    def stop(self) -> None:
        """Cancel this run's tasks (one waiting for a worker, where every worker was lost,
        would wait for ever) and stop the commands running for it on the workers, each
        bounded: a worker that is gone does not answer."""
        with self.lock:
            tasks = list(self.going)
        _bounded(lambda: self.client.cancel(tasks, force=True))
        _bounded(lambda: self.client.run(_stop_here, self.key, on_error="ignore"))


_BOUND = 10.0  # seconds a call to clean up on the cluster may take before it is left behind


def _bounded(call: Callable[[], object]) -> None:
    """`call`, in a thread of its own, waited for at most `_BOUND` seconds; its failure
    ignored (a cluster already gone has nothing to clean up)."""

    def quietly() -> None:
        with contextlib.suppress(Exception):
            call()

    helper = threading.Thread(target=quietly, name="ddchange-cluster-cleanup", daemon=True)
    helper.start()
    helper.join(_BOUND)


def _bundle(scratch: Scratch, source: str) -> bytes:
    if source:
        return b""
    with tempfile.TemporaryDirectory(prefix="ddchange-bundle-") as where:
        path = Path(where) / "good.bundle"
        git.bundle(scratch.path, path)
        return path.read_bytes()


# Seconds a run waits for a test while the cluster has no worker at all (a worker lost is
# often started again in a few seconds); DDCHANGE_NO_WORKER_GRACE sets another.
NO_WORKER_GRACE = 120.0
_POLL = 5.0  # seconds between looks at the cluster's workers while a test is out


def _no_worker_grace() -> float:
    try:
        seconds = float(os.environ.get("DDCHANGE_NO_WORKER_GRACE", ""))
    except ValueError:
        return NO_WORKER_GRACE
    return seconds if 0 < seconds < float("inf") else NO_WORKER_GRACE


def _result(future: Any, address: str, threads: Callable[[], int]) -> Any:
    """The verdict of a remote run; a lost worker or scheduler is no outcome, nor is a
    cluster with no worker (`threads` counts them) for `_no_worker_grace` seconds. A run is
    never cancelled from here (`stop` ends its commands, and it returns), so a cancelled one
    is one the cluster dropped (it was restarted, or it lost this client)."""
    import distributed

    grace, alone = _no_worker_grace(), 0.0
    try:
        while not future.done():
            with contextlib.suppress(TimeoutError):  # distributed.TimeoutError is the same
                future.result(timeout=min(_POLL, grace))
            if future.done():
                break
            alone = alone + min(_POLL, grace) if threads() == 0 else 0.0
            if alone >= grace:
                raise errors.ClusterLost(address, f"it has had no worker for {grace:g} s")
        done = future.result()
    except distributed.KilledWorker as lost:
        raise errors.ClusterLost(address, f"it lost the workers that ran a test ({lost})") from None
    except CancelledError as dropped:
        raise errors.ClusterLost(address, f"it dropped a test ({dropped})") from None
    except (OSError, TimeoutError) as failure:
        raise errors.ClusterLost(address, f"the scheduler is gone ({failure})") from None
    return done


# -- on the workers ---------------------------------------------------------------------------

_SHIPMENTS: dict[str, Shipment] = {}  # shipment key → the shipment, as delivered here
_TREES: dict[tuple[str, int], Scratch] = {}  # (shipment key, thread) → that thread's clone
_BUNDLES: dict[str, Path] = {}  # shipment key → the bundle, written once per worker
_HOME: list[Path] = []  # this worker's directory for both, once it has one
_INPUTS: dict[str, set[str]] = {}  # reduction key → its candidates' directories being tested
_LOCK = threading.Lock()


def receive(shipment: Shipment) -> None:
    """On a worker: keep `shipment` for the runs of its key."""
    with _LOCK:
        _SHIPMENTS[shipment.key] = shipment


def _run_here(key: str, config: Config, expect: runner.Expectation) -> runner.Verdict:
    """On a worker: `config` written in this thread's clone of run `key`, built and tested."""
    with _LOCK:
        shipment = _SHIPMENTS[key]
    recipe = dataclasses.replace(shipment.recipe, expect=expect)
    with runner.sharing():  # the worker's other threads run commands beside this one
        return attempt(recipe, _tree(shipment), config)


def _test_here(
    key: str,
    test: tuple[str, ...],
    relative: tuple[str, ...],
    contents: tuple[bytes, ...],
    timeout: float | None,
) -> runner.Execution:
    """On a worker: `test` run on a candidate of reduction `key` as a local run is
    (`inputs.run_candidate`), in a new directory of this worker's, kept in `_INPUTS` while the
    test runs so that `_stop_here` finds it."""
    from ddchange.trial.inputs import run_candidate  # it imports this module for --scheduler

    running_in: list[str] = []

    def begun(here: Path) -> None:
        running_in.append(os.fspath(here))
        with _LOCK:
            _INPUTS.setdefault(key, set()).add(running_in[0])

    try:
        with runner.sharing():  # the worker's other threads run commands beside this one
            return run_candidate(test, relative, contents, timeout, _home(), begun)
    finally:
        with _LOCK:
            for here in running_in:
                _INPUTS[key].discard(here)
                if not _INPUTS[key]:
                    del _INPUTS[key]


def _tree(shipment: Shipment) -> Scratch:
    """This thread's clone for `shipment`, made on its first run."""
    key = (shipment.key, threading.get_ident())
    if key not in _TREES:
        path = scratch_directory(_home())
        try:
            git.clone_elsewhere(_source(shipment), path, shipment.setup, shipment.good)
        except BaseException:
            remove_scratch(path)
            raise
        _TREES[key] = Scratch(
            repo=git.open_repo(path),
            path=path,
            good=shipment.good,
            watch=Watch(path),
            identity=identity(path),
        )
    return _TREES[key]


def _source(shipment: Shipment) -> str:
    if shipment.source:
        return shipment.source
    home = _home()
    with _LOCK:
        if shipment.key not in _BUNDLES:
            descriptor, name = tempfile.mkstemp(suffix=".bundle", dir=home)
            with os.fdopen(descriptor, "wb") as out:
                out.write(shipment.bundle)
            _BUNDLES[shipment.key] = Path(name)
        return os.fspath(_BUNDLES[shipment.key])


def _home() -> Path:
    """This worker's directory, made on its first run, after removing those of dead workers."""
    with _LOCK:
        if not _HOME:
            remove_dead_workers()
            _HOME.append(worker_directory())
        return _HOME[0]


def _stop_here(key: str) -> None:
    """On a worker: stop the commands running for run `key`."""
    with _LOCK:
        inputs = set(_INPUTS.get(key, ()))
    trees = {os.fspath(tree.path) for (run, _), tree in list(_TREES.items()) if run == key}
    runner.stop_all(trees | inputs)


@atexit.register
def _forget_all() -> None:
    for key in {run for run, _ in list(_TREES)} | set(_BUNDLES):
        forget(key)
    for home in _HOME:
        dispose(home)


def forget(key: str) -> None:
    """On a worker: remove run `key`'s shipment, clones and bundle, and what dead workers left."""
    with _LOCK:
        _SHIPMENTS.pop(key, None)
    for found in [k for k in _TREES if k[0] == key]:
        tree = _TREES.pop(found)
        if tree.watch is not None:
            tree.watch.close()
        remove_scratch(tree.path)
    bundle = _BUNDLES.pop(key, None)
    if bundle is not None:
        bundle.unlink(missing_ok=True)
    remove_dead_workers()
