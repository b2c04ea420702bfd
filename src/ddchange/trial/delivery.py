"""How a run's `cluster.Shipment` reaches the Dask workers: as a worker plugin.

The scheduler keeps the plugin for the length of the run and gives it to every worker, also to
one that joins later, such as the worker a nanny starts in place of one that was killed. Data
scattered to the workers would not last: Dask's active memory manager keeps one copy of it
(its default policy drops the others within seconds), so losing that single worker would lose
the shipment while the cluster still has workers.

Its own module because it subclasses a class of `distributed`, which the rest of the trial
layer imports only once a run asks for a cluster.
"""

from __future__ import annotations

from distributed import Worker
from distributed.diagnostics.plugin import WorkerPlugin

from ddchange.trial import cluster


class Delivery(WorkerPlugin):
    """The shipment, received by each worker when it joins; taken back (`cluster.forget`)
    when the run unregisters it, or when the worker closes."""

    def __init__(self, shipment: cluster.Shipment) -> None:
        self.shipment = shipment

    def setup(self, worker: Worker) -> None:
        cluster.receive(self.shipment)

    def teardown(self, worker: Worker) -> None:
        cluster.forget(self.shipment.key)
