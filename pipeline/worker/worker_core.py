"""What the sync Worker and the AsyncWorker share: the consumer's state and its steps
against the server (create the group, start an entry under its lock, finish it,
requeue what shutdown abandons), each written once as a flow
(pipeline/worker/flows.py). The two workers differ only in how handlers run (threads
or tasks), how they wait, and how signals reach them."""
from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import redis

from pipeline.worker.cluster import moved_while_blocked, refresh_topology
from pipeline.worker.config import WorkerConfig
from pipeline.worker.expiry_listener import ExpiryEvents
from pipeline.worker.flows import is_async_client, resolve
from pipeline.worker.heartbeat import Heartbeat
from pipeline.worker.keys import error_key, lock_key
from pipeline.worker.reconciliation import Reconciler
from pipeline.worker.requeue import Requeuer
from pipeline.worker.scripts import Scripts
from pipeline.worker.stats import WorkerStats
from pipeline.worker.task import Task, text

log = logging.getLogger("pipeline.worker")


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
    """Whether a failed XREADGROUP is worth reading again after a pause: the connection
    was lost, or (on a cluster) the stream left the node while the read blocked."""
    return isinstance(error, redis.ConnectionError) or (
        isinstance(error, redis.ResponseError) and moved_while_blocked(error))


def describe(error: BaseException) -> str:
    """A handler's failure as it is kept with the entry (`_last_error`)."""
    return f"{type(error).__name__}: {error}"


class WorkerCore:
    ASYNC_CLIENT = False     # which kind of client the worker takes (is_async_client)

    def __init__(self, client: Any, config: WorkerConfig, handler: Any) -> None:
        if is_async_client(client) != self.ASYNC_CLIENT:
            kind, other = ("redis.asyncio", "Worker") if self.ASYNC_CLIENT else ("sync", "AsyncWorker")
            raise TypeError(f"{type(self).__name__} takes a {kind} client, not {type(client).__name__}: "
                            f"use {other} for it")
        self.client = client
        self.config = config
        self.handler = handler
        self.stats = WorkerStats()
        self.scripts = Scripts(client)
        self.requeuer = Requeuer(config, self.scripts, self.stats)
        self._ttl_ms = int(config.lock_ttl * 1000)
        r = config.recovery
        # A failed handler's error must outlive the wait for its requeue (lock expiry or scan).
        self._error_ttl_ms = int((config.lock_ttl + 2 * (r.min_idle_time + r.reconciliation_interval)) * 1000)
        self.heartbeat = Heartbeat(self.scripts, config.heartbeat, self._ttl_ms, self.stats)
        self.reconciler = Reconciler(client, config, self.requeuer, self.stats)
        self.expiry_events = ExpiryEvents(client, config, self.requeuer)
        self._in_flight: dict[str, InFlight] = {}
        self._in_flight_guard = threading.Lock()

    async def _create_group(self) -> None:
        c = self.config
        try:
            await resolve(self.client.xgroup_create(c.stream, c.group, id="0", mkstream=True))
        except redis.ResponseError as error:
            if not str(error).startswith("BUSYGROUP"):
                raise

    async def _reset_topology(self) -> int:
        """Re-reads the cluster's slot map and asks the expiry listener to follow the
        stream's slot; the ExpiryEvents.listening value that says it does."""
        await resolve(refresh_topology(self.client))
        return self.expiry_events.retarget()

    async def _begin(self, entry_id: Any, fields: Any) -> Optional[tuple[Task, InFlight]]:
        """Takes a new entry's lock and tracks it; what to run, or None when there is
        nothing to run (its fields were deleted, or someone else holds its lock). An entry
        read but not yet locked when its process dies has no lock to expire: the scan
        alone recovers it."""
        c, entry_id = self.config, text(entry_id)
        if not fields:                  # deleted between XADD and our read: nothing to run
            await resolve(self.client.xack(c.stream, c.group, entry_id))
            return None
        lock, token = lock_key(c.stream, entry_id), uuid.uuid4().hex
        if not await resolve(self.scripts.acquire(lock, token, self._ttl_ms)):
            log.warning("%s %s: its lock is held elsewhere; leaving it to recovery", c.stream, entry_id)
            return None
        job = InFlight(lock, token)
        with self._in_flight_guard:
            self._in_flight[entry_id] = job
        self.heartbeat.hold(lock, token)
        return Task.from_entry(entry_id, fields, c.recovery.field_prefix), job

    async def _start_entries(self, reply: Any, slots: int, give_back: Callable[[int], None],
                             submit: Callable[[Task, InFlight], None]) -> None:
        """Starts the entries of an XREADGROUP reply read with `slots` handler slots
        reserved: each one begun goes to `submit`, the slots not used go back."""
        entries = entries_of(reply)
        give_back(slots - len(entries))
        for entry_id, fields in entries:
            begun = await self._begin(entry_id, fields)
            if begun is None:
                give_back(1)
            else:
                submit(*begun)

    async def _finish(self, task: Task, job: InFlight, error: Optional[str]) -> None:
        """After the handler: XACK on success; on failure leave the entry pending with its
        lock left to expire, so its expiry (or the scan) requeues it with the error."""
        c = self.config
        with self._in_flight_guard:
            self._in_flight.pop(task.id, None)
        if not job.settle("finished"):
            return                      # shutdown requeued it already
        self.heartbeat.drop(job.lock)
        if error is None:
            await resolve(self.scripts.ack(c.stream, job.lock, c.group, task.id, job.token))
            self.stats.add("tasks_done")
            return
        log.warning("%s %s failed: %s", c.stream, task.id, error)
        await resolve(self.client.set(error_key(c.stream, task.id), error, px=self._error_ttl_ms))
        self.stats.add("tasks_failed")

    async def _requeue_unfinished(self) -> None:
        """Shutdown's last step: requeue the entries whose handlers did not finish in time."""
        with self._in_flight_guard:
            unfinished = list(self._in_flight.items())
        reason = f"worker shut down before the handler finished ({self.config.shutdown_timeout} s)"
        for entry_id, job in unfinished:
            if job.settle("abandoned"):
                self.heartbeat.drop(job.lock)
                await resolve(self.requeuer.requeue(entry_id, "shutdown", reason, token=job.token))
