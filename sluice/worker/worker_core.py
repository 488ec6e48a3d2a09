"""What the sync Worker and the AsyncWorker share: the consumer's state and its steps
against the server (create the group, start an entry under its lock, finish it,
requeue what shutdown abandons), each written once as a flow
(sluice/worker/flows.py), retried while the server is down (reconnect.py), and
counted in the stats and their Prometheus metrics. The two workers differ only in how
handlers run (threads or tasks), how they wait, and how signals reach them."""
from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import redis
from prometheus_client import CollectorRegistry

from sluice.worker.acks import AckQueue
from sluice.worker.cluster import moved_while_blocked, refresh_topology
from sluice.worker.config import WorkerConfig
from sluice.worker.expiry_listener import ExpiryEvents
from sluice.worker.flows import Maybe, is_async_client, resolve
from sluice.worker.heartbeat import Heartbeat
from sluice.worker.keys import error_key, lock_key
from sluice.worker.metrics import MetricsEndpoint, WorkerMetrics
from sluice.worker.reconciliation import Reconciler
from sluice.worker.reconnect import DISCONNECTED, until_connected
from sluice.worker.requeue import Requeuer
from sluice.worker.retry import Retrier, retry_delay
from sluice.worker.scripts import Scripts
from sluice.worker.stats import WorkerStats
from sluice.worker.task import Task, text

log = logging.getLogger("sluice.worker")


@dataclass
class InFlight:
    """One entry being handled; `state` settles who finishes it: the handler or shutdown."""

    lock: str
    token: str
    state: str = "running"              # running -> finished | abandoned
    guard: threading.Lock = field(default_factory=threading.Lock)

    def settle(self, state: str) -> bool:
        """Move from running to `state`; False if the other side got there first."""
        with self.guard:
            if self.state != "running":
                return False
            self.state = state
            return True


def entries_of(reply: Any) -> list:
    """The (id, fields) pairs of an XREADGROUP reply, RESP2 (list) or RESP3 (dict)."""
    return [e for _, batch in (reply.items() if isinstance(reply, dict) else reply or []) for e in batch]


def read_again(error: redis.RedisError) -> bool:
    """Whether a failed XREADGROUP is worth reading again after a pause: the server is
    down or restarting, or (on a cluster) the stream left the node while the read blocked."""
    return isinstance(error, DISCONNECTED) or (
        isinstance(error, redis.ResponseError) and moved_while_blocked(error))


def describe(error: BaseException) -> str:
    """A handler's failure as it is kept with the entry (`_last_error`)."""
    return f"{type(error).__name__}: {error}"


class WorkerCore:
    ASYNC_CLIENT = False     # which kind of client the worker takes (is_async_client)

    def __init__(self, client: Any, config: WorkerConfig, handler: Any,
                 registry: Optional[CollectorRegistry] = None) -> None:
        """registry: where the Prometheus metrics go (default: a registry of this worker's own)."""
        if is_async_client(client) != self.ASYNC_CLIENT:
            kind, other = ("redis.asyncio", "Worker") if self.ASYNC_CLIENT else ("sync", "AsyncWorker")
            raise TypeError(f"{type(self).__name__} takes a {kind} client, not {type(client).__name__}: "
                            f"use {other} for it")
        self.client = client
        self.config = config
        self.handler = handler
        self.metrics = WorkerMetrics(config.stream, config.group, config.consumer, registry)
        self.stats = WorkerStats(sink=self.metrics)
        self.scripts = Scripts(client)
        self.requeuer = Requeuer(config, self.scripts, self.stats)
        self._ttl_ms = int(config.lock_ttl * 1000)
        r = config.recovery
        # A failed handler's error must outlive the wait for its requeue (lock expiry or scan).
        self._error_ttl_ms = int((config.lock_ttl + 2 * (r.min_idle_time + r.reconciliation_interval)) * 1000)
        self.heartbeat = Heartbeat(self.scripts, config.heartbeat, self._ttl_ms, self.stats)
        self.reconciler = Reconciler(client, config, self.requeuer, self.scripts, self.stats)
        self.retrier = Retrier(self.heartbeat, self.requeuer)
        self.expiry_events = ExpiryEvents(client, config, self.requeuer)
        self._in_flight: dict[str, InFlight] = {}
        self._in_flight_guard = threading.Lock()
        self._acks: AckQueue[tuple[str, str, str]] = AckQueue()
        self._endpoint: Optional[MetricsEndpoint] = None

    def _stopped_within(self, seconds: float) -> Maybe[bool]:
        """Waits up to `seconds`; True once `stop` was asked (steps that start work give up)."""
        raise NotImplementedError

    def _closed_within(self, seconds: float) -> Maybe[bool]:
        """Waits up to `seconds`; True once `run` returned (in-flight results give up)."""
        raise NotImplementedError

    @property
    def metrics_port(self) -> Optional[int]:
        """The port /metrics is served on while `run` runs (None: not served)."""
        return self._endpoint.port if self._endpoint is not None else None

    def _open_endpoint(self) -> None:
        c = self.config
        if c.metrics_port is not None:
            self._endpoint = MetricsEndpoint(self.metrics.registry, c.metrics_port, c.metrics_host)
            log.info("serving Prometheus metrics on http://%s:%d/metrics", c.metrics_host, self._endpoint.port)

    def _close_endpoint(self) -> None:
        """Blocks until the endpoint's server thread ended."""
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is not None:
            endpoint.close()

    async def _create_group(self) -> None:
        c = self.config
        try:
            await until_connected(lambda: self.client.xgroup_create(c.stream, c.group, id="0", mkstream=True),
                                  "creating the group", self._stopped_within)
        except redis.ResponseError as error:
            if not str(error).startswith("BUSYGROUP"):
                raise

    async def _expiry_events_on(self) -> bool:
        """Whether to start the expiry listener: configured, and the stream's master
        publishes the events."""
        return self.config.recovery.keyspace_listener and await until_connected(
            self.expiry_events.turn_on, "checking notify-keyspace-events", self._stopped_within)

    async def _start_up_scan(self) -> None:
        """What dead workers left, before taking new work."""
        await until_connected(self.reconciler.scan_once, "the start-up scan", self._stopped_within)

    async def _reset_topology(self) -> int:
        """Re-reads the cluster's slot map and asks the expiry listener to follow the
        stream's slot; the ExpiryEvents.listening value that says it does."""
        await resolve(refresh_topology(self.client))
        return self.expiry_events.retarget()

    async def _start_entries(self, reply: Any, slots: int, give_back: Callable[[int], None],
                             submit: Callable[[Task, InFlight], None]) -> None:
        """Starts the entries of an XREADGROUP reply read with `slots` handler slots
        reserved: their locks are taken in one call, each entry whose lock is ours goes
        to `submit`, the slots not used go back. Nothing runs for an entry whose fields
        were deleted (acknowledged) or whose lock someone else holds. An entry read but
        not yet locked when its process dies has no lock to expire: the scan alone
        recovers it."""
        c = self.config
        entries = entries_of(reply)
        give_back(slots - len(entries))
        deleted = [text(entry_id) for entry_id, fields in entries if not fields]
        live = [(text(entry_id), fields) for entry_id, fields in entries if fields]
        locks = [lock_key(c.stream, entry_id) for entry_id, _ in live]
        token = uuid.uuid4().hex        # one per read: the locks it takes are distinct keys
        give_back(len(deleted))
        try:
            if deleted:                 # deleted between XADD and our read: nothing to run
                await until_connected(lambda: self.client.xack(c.stream, c.group, *deleted),
                                      f"acknowledging deleted {', '.join(deleted)}", self._stopped_within)
            ours = []
            if locks:
                ours, pending = await until_connected(
                    lambda: self.scripts.acquire(c.stream, c.group, locks, token, self._ttl_ms),
                    f"locking {len(locks)} entries", self._stopped_within)
                self.stats.set("pel_depth", pending)
        except DISCONNECTED:            # stopped while the server was away: recovery takes them
            give_back(len(live))
            return
        for (entry_id, fields), lock, locked in zip(live, locks, ours):
            if not locked:
                log.warning("%s %s: its lock is held elsewhere; leaving it to recovery", c.stream, entry_id)
                give_back(1)
                continue
            job = InFlight(lock, token)
            with self._in_flight_guard:
                self._in_flight[entry_id] = job
            self.heartbeat.hold(lock, token)
            submit(Task.from_entry(entry_id, fields, c.recovery.field_prefix), job)

    async def _run_handler(self, task: Task, job: InFlight) -> None:
        """Runs the handler (awaited by the asyncio worker), times it, and finishes the task."""
        error = None
        started = time.monotonic()
        try:
            returned = self.handler(task)
            if self.ASYNC_CLIENT:
                await returned
        except Exception as exc:  # noqa: BLE001 - any handler failure leaves the entry for a retry
            error = describe(exc)
        self.stats.observe("handler_duration_seconds", time.monotonic() - started)
        await self._finish(task, job, error)

    async def _finish(self, task: Task, job: InFlight, error: Optional[str]) -> None:
        """After the handler: XACK on success (in a group: `_acknowledge`); on failure
        note the error and requeue the entry after its retry delay, its lock kept
        meanwhile (with retry_backoff "lock": leave the lock to expire, so its expiry or
        the scan requeues it). Both wait out a server restart (until `run` returned)."""
        c = self.config
        with self._in_flight_guard:
            self._in_flight.pop(task.id, None)
        if not job.settle("finished"):
            return                      # shutdown requeued it already
        if error is None:
            await self._acknowledge((task.id, job.lock, job.token))
            return
        r = c.recovery
        if r.retry_backoff == "lock":
            self.heartbeat.drop(job.lock)
        log.warning("%s %s failed: %s", c.stream, task.id, error)
        await until_connected(lambda: self.client.set(error_key(c.stream, task.id), error, px=self._error_ttl_ms),
                              f"noting the error of {task.id}", self._closed_within)
        self.stats.add("tasks_failed")
        if r.retry_backoff != "lock":
            self.retrier.schedule(retry_delay(r, task.retry_count), task.id, job.lock, job.token, error)

    async def _acknowledge(self, done: tuple[str, str, str]) -> None:
        """Acknowledges a finished task (entry id, lock, token) and frees its lock,
        together with every task that finishes while that call is on its way
        (sluice/worker/acks.py); returns at once when another sender takes it."""
        c = self.config
        if not self._acks.add(done):
            return
        while group := self._acks.next_group():
            # Renewals stop first: one that came after the script would find the lock
            # gone and count it lost.
            for _, lock, _ in group:
                self.heartbeat.drop(lock)
            try:
                _, pending = await until_connected(
                    lambda: self.scripts.ack(c.stream, c.group, group),  # noqa: B023
                    f"acknowledging {len(group)} tasks", self._closed_within)
            except BaseException:
                for _, lock, _ in self._acks.give_up():   # their locks expire: recovery requeues them
                    self.heartbeat.drop(lock)
                raise
            self.stats.add("tasks_done", len(group))
            self.stats.set("pel_depth", pending)

    async def _requeue_unfinished(self) -> None:
        """Shutdown's last step: requeue the entries whose handlers did not finish in time."""
        with self._in_flight_guard:
            unfinished = list(self._in_flight.items())
        reason = f"worker shut down before the handler finished ({self.config.shutdown_timeout} s)"
        for entry_id, job in unfinished:
            if job.settle("abandoned"):
                self.heartbeat.drop(job.lock)
                try:
                    await resolve(self.requeuer.requeue(entry_id, "shutdown", reason, token=job.token))
                except DISCONNECTED as error:   # its lock expires, then recovery requeues it
                    log.warning("%s %s: not requeued at shutdown: %s", self.config.stream, entry_id, error)
