"""The sync worker: reads its group's new entries, runs each under a renewed lock in
a bounded pool of handler threads, and acknowledges only what finished."""
from __future__ import annotations

import logging
import signal
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import redis

from pipeline.worker.background import Background
from pipeline.worker.config import WorkerConfig
from pipeline.worker.cluster import moved_while_blocked, refresh_topology
from pipeline.worker.expiry_listener import ExpiryListener
from pipeline.worker.handler_pool import HandlerPool
from pipeline.worker.heartbeat import Heartbeat
from pipeline.worker.keys import error_key, lock_key
from pipeline.worker.reconciliation import Reconciler
from pipeline.worker.requeue import Requeuer
from pipeline.worker.scripts import Scripts
from pipeline.worker.stats import WorkerStats
from pipeline.worker.task import Task, text

log = logging.getLogger("pipeline.worker")

Handler = Callable[[Task], None]


@dataclass
class _InFlight:
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


class Worker:
    def __init__(self, client: Any, config: WorkerConfig, handler: Handler) -> None:
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
        self._stopping = threading.Event()
        self._in_flight: dict[str, _InFlight] = {}
        self._in_flight_guard = threading.Lock()
        self._listener: ExpiryListener | None = None

    def stop(self) -> None:
        """Ask `run` to stop reading and shut down (safe from any thread or signal handler)."""
        self._stopping.set()

    def run(self) -> None:
        """Process entries until `stop` (or SIGTERM/SIGINT, when run in the main thread)."""
        c = self.config
        self._create_group()
        previous = self._install_signal_handlers()
        pool = HandlerPool(c.concurrency)
        heartbeat = Heartbeat(self.scripts, c.heartbeat, self._ttl_ms, self.stats)
        reconciler = Reconciler(self.client, c, self.requeuer, self.stats)
        started: list[Background] = []
        try:
            if c.recovery.keyspace_listener:
                listener = ExpiryListener(self.client, c, self.requeuer)
                if listener.start():
                    self._listener = listener
                    started.append(listener)
            reconciler.scan_once()      # what dead workers left, before taking new work
            for part in (heartbeat, reconciler):
                part.start()
                started.append(part)
            self._read_loop(pool, heartbeat)
        finally:
            self._listener = None
            self._shut_down(pool, heartbeat)
            pool.close()
            for part in started:
                part.stop()
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def reset_topology(self) -> None:
        """Call after a failover or resharding of a Redis Cluster: re-reads the slot map
        and moves the expiry listener to the master that now owns the stream's slot,
        returning once it listens there. (It also follows on its own once the client
        meets a MOVED reply; meanwhile the scan covers what it misses.)"""
        refresh_topology(self.client)
        listener = self._listener
        if listener is not None:
            listener.retarget()

    def _create_group(self) -> None:
        try:
            self.client.xgroup_create(self.config.stream, self.config.group, id="0", mkstream=True)
        except redis.ResponseError as error:
            if not str(error).startswith("BUSYGROUP"):
                raise

    def _install_signal_handlers(self) -> dict:
        if threading.current_thread() is not threading.main_thread():
            return {}
        previous = {}
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, lambda *_: self.stop())
        return previous

    def _read_loop(self, pool: HandlerPool, heartbeat: Heartbeat) -> None:
        c = self.config
        while not self._stopping.is_set():
            slots = pool.take(timeout=c.block)
            if not slots:
                continue
            try:
                reply = self.client.xreadgroup(c.group, c.consumer, {c.stream: ">"}, count=slots,
                                               block=int(c.block * 1000))
            except (redis.ConnectionError, redis.ResponseError) as error:
                if isinstance(error, redis.ResponseError) and not moved_while_blocked(error):
                    raise
                pool.give_back(slots)
                log.warning("reading %s failed (retrying): %s", c.stream, error)
                self._stopping.wait(c.block)
                continue
            entries = [e for _, batch in (reply.items() if isinstance(reply, dict) else reply or [])
                       for e in batch]
            pool.give_back(slots - len(entries))
            for entry_id, fields in entries:
                self._start(pool, heartbeat, text(entry_id), fields)

    def _start(self, pool: HandlerPool, heartbeat: Heartbeat, entry_id: str, fields: Any) -> None:
        c = self.config
        if not fields:                  # deleted between XADD and our read: nothing to run
            self.client.xack(c.stream, c.group, entry_id)
            pool.give_back(1)
            return
        lock, token = lock_key(c.stream, entry_id), uuid.uuid4().hex
        if not self.scripts.acquire(lock, token, self._ttl_ms):
            log.warning("%s %s: its lock is held elsewhere; leaving it to recovery", c.stream, entry_id)
            pool.give_back(1)
            return
        job = _InFlight(lock, token)
        with self._in_flight_guard:
            self._in_flight[entry_id] = job
        heartbeat.hold(lock, token)
        task = Task.from_entry(entry_id, fields, c.recovery.field_prefix)
        pool.submit(lambda: self._handle(heartbeat, task, job))

    def _handle(self, heartbeat: Heartbeat, task: Task, job: _InFlight) -> None:
        c = self.config
        error = None
        try:
            self.handler(task)
        except Exception as exc:  # noqa: BLE001 - any handler failure leaves the entry for a retry
            error = f"{type(exc).__name__}: {exc}"
        with self._in_flight_guard:
            self._in_flight.pop(task.id, None)
        if not job.settle("finished"):
            return                      # shutdown requeued it already
        heartbeat.drop(job.lock)
        if error is None:
            self.scripts.ack(c.stream, job.lock, c.group, task.id, job.token)
            self.stats.add("tasks_done")
            return
        # Pending, with the lock left to expire: its expiry (or the scan) requeues it.
        log.warning("%s %s failed: %s", c.stream, task.id, error)
        self.client.set(error_key(c.stream, task.id), error, px=self._error_ttl_ms)
        self.stats.add("tasks_failed")

    def _shut_down(self, pool: HandlerPool, heartbeat: Heartbeat) -> None:
        """Stop reading (done), give handlers the shutdown timeout, requeue the rest."""
        if pool.wait_idle(self.config.shutdown_timeout):
            return
        with self._in_flight_guard:
            unfinished = list(self._in_flight.items())
        reason = f"worker shut down before the handler finished ({self.config.shutdown_timeout} s)"
        for entry_id, job in unfinished:
            if job.settle("abandoned"):
                heartbeat.drop(job.lock)
                self.requeuer.requeue(entry_id, "shutdown", reason, token=job.token)
