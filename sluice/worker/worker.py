"""The sync worker: reads its group's new entries, runs each under a renewed lock in
a bounded pool of handler threads, and acknowledges only what finished. Its steps
against the server are WorkerCore's (sluice/worker/worker_core.py)."""
from __future__ import annotations

import logging
import signal
import threading
from functools import partial
from typing import Any, Callable, Optional

import redis
from prometheus_client import CollectorRegistry

from sluice.worker.background import Background, EveryThread
from sluice.worker.config import WorkerConfig
from sluice.worker.expiry_listener import ExpiryListener
from sluice.worker.flows import run_sync
from sluice.worker.handler_pool import HandlerPool
from sluice.worker.task import Task
from sluice.worker.worker_core import InFlight, WorkerCore, read_again

log = logging.getLogger("sluice.worker")

Handler = Callable[[Task], None]


class Worker(WorkerCore):
    def __init__(self, client: Any, config: WorkerConfig, handler: Handler, *,
                 registry: Optional[CollectorRegistry] = None) -> None:
        """registry: where the Prometheus metrics go (default: a registry of this worker's own)."""
        super().__init__(client, config, handler, registry)
        self._stopping = threading.Event()
        self._closed = threading.Event()        # run() returned: in-flight results stop retrying
        self._listener: ExpiryListener | None = None

    def stop(self) -> None:
        """Ask `run` to stop reading and shut down (safe from any thread or signal handler)."""
        self._stopping.set()

    def _stopped_within(self, seconds: float) -> bool:
        return self._stopping.wait(seconds)

    def _closed_within(self, seconds: float) -> bool:
        return self._closed.wait(seconds)

    def run(self) -> None:
        """Process entries until `stop` (or SIGTERM/SIGINT, when run in the main thread);
        a server restart is ridden out (commands are retried until it is back)."""
        self._open_endpoint()
        try:
            self._run()
        finally:
            self._closed.set()
            self._close_endpoint()

    def _run(self) -> None:
        c = self.config
        run_sync(self._create_group())
        previous = self._install_signal_handlers()
        pool = HandlerPool(c.concurrency)
        started: list[Background] = []
        try:
            if run_sync(self._expiry_events_on()):
                self._listener = ExpiryListener(self.expiry_events)
                self._listener.start()
                started.append(self._listener)
            run_sync(self._start_up_scan())
            for part in (self.heartbeat, self.reconciler, self.retrier):
                thread = EveryThread(part)
                thread.start()
                started.append(thread)
            self._read_loop(pool)
        finally:
            self._listener = None
            if not pool.wait_idle(c.shutdown_timeout):
                run_sync(self._requeue_unfinished())
            run_sync(self.retrier.flush())
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
        generation = run_sync(self._reset_topology())
        listener = self._listener
        if listener is not None:
            listener.wait_listening(generation)

    def _install_signal_handlers(self) -> dict:
        if threading.current_thread() is not threading.main_thread():
            return {}
        previous = {}
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, lambda *_: self.stop())
        return previous

    def _read_loop(self, pool: HandlerPool) -> None:
        c = self.config
        while not self._stopping.is_set():
            slots = pool.take(timeout=c.block)
            if not slots:
                continue
            try:
                reply = self.client.xreadgroup(c.group, c.consumer, {c.stream: ">"}, count=slots,
                                               block=int(c.block * 1000))
            except redis.RedisError as error:
                if not read_again(error):
                    raise
                pool.give_back(slots)
                log.warning("reading %s failed (retrying): %s", c.stream, error)
                self._stopping.wait(c.block)
                continue
            run_sync(self._start_entries(reply, slots, pool.give_back, partial(self._submit, pool)))

    def _submit(self, pool: HandlerPool, task: Task, job: InFlight) -> None:
        pool.submit(lambda: run_sync(self._run_handler(task, job)))
