"""The asyncio worker, on redis.asyncio clients: the sync Worker's guarantees with
handlers as coroutines. Concurrency is bounded by a semaphore of in-flight handlers;
the heartbeat, the reconciliation scan and the expiry listener are tasks beside the
read loop; SIGTERM/SIGINT (loop signal handlers, in the main thread) stop reading, let
in-flight handlers finish up to shutdown_timeout, then requeue and cancel the rest.
Its steps against the server are WorkerCore's (sluice/worker/worker_core.py).

    worker = AsyncWorker(redis.asyncio.Redis(), WorkerConfig("orders", "billing", "pod-1"), handle)
    await worker.run()
"""
from __future__ import annotations

import asyncio
import logging
import signal
import threading
from functools import partial
from typing import Any, Awaitable, Callable, Optional

import redis
from prometheus_client import CollectorRegistry

from sluice.worker.background import every, stopped_within
from sluice.worker.config import WorkerConfig
from sluice.worker.task import Task
from sluice.worker.worker_core import InFlight, WorkerCore, read_again

log = logging.getLogger("sluice.worker")

AsyncHandler = Callable[[Task], Awaitable[None]]
SUBSCRIBE_WAIT_S = 5.0       # how long run waits for the expiry listener to subscribe
CANCEL_WAIT_S = 1.0          # how long shutdown waits for cancelled handlers to unwind


class AsyncWorker(WorkerCore):
    ASYNC_CLIENT = True

    def __init__(self, client: Any, config: WorkerConfig, handler: AsyncHandler, *,
                 registry: Optional[CollectorRegistry] = None) -> None:
        """registry: where the Prometheus metrics go (default: a registry of this worker's own)."""
        super().__init__(client, config, handler, registry)
        self._stopping = asyncio.Event()
        self._closed = asyncio.Event()          # run() returned: in-flight results stop retrying
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._handlers: set[asyncio.Task] = set()
        self._subscribed: Optional[asyncio.Event] = None      # the listener's "subscribed"; None: no listener

    def stop(self) -> None:
        """Ask `run` to stop reading and shut down (safe from any thread)."""
        loop = self._loop
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(self._stopping.set)
        else:
            self._stopping.set()

    def _stopped_within(self, seconds: float) -> Awaitable[bool]:
        return stopped_within(self._stopping, seconds)

    def _closed_within(self, seconds: float) -> Awaitable[bool]:
        return stopped_within(self._closed, seconds)

    async def run(self) -> None:
        """Process entries until `stop` (or SIGTERM/SIGINT, when the loop runs in the main thread);
        a server restart is ridden out (commands are retried until it is back)."""
        self._loop = asyncio.get_running_loop()
        self._open_endpoint()
        try:
            await self._run()
        finally:
            self._closed.set()
            await asyncio.to_thread(self._close_endpoint)

    async def _run(self) -> None:
        c = self.config
        await self._create_group()
        previous = self._install_signal_handlers()
        slots = asyncio.Semaphore(c.concurrency)
        parts_stop = asyncio.Event()
        parts: list[asyncio.Task] = []
        try:
            if await self._expiry_events_on():
                self._subscribed = asyncio.Event()
                parts.append(asyncio.create_task(self.expiry_events.listen(
                    parts_stop.is_set, self._subscribed.set, partial(stopped_within, parts_stop))))
                await self._wait_listening(0)
            await self._start_up_scan()
            parts += [asyncio.create_task(every(part, parts_stop))
                      for part in (self.heartbeat, self.reconciler, self.retrier)]
            await self._read_loop(slots)
        finally:
            await self._shut_down()
            await self.retrier.flush()
            parts_stop.set()
            await asyncio.gather(*parts, return_exceptions=True)
            self._restore_signal_handlers(previous)
            self._subscribed = None

    async def reset_topology(self) -> None:
        """Call after a failover or resharding of a Redis Cluster: re-reads the slot map
        and moves the expiry listener to the master that now owns the stream's slot,
        returning once it listens there. (It also follows on its own once the client
        meets a MOVED reply; meanwhile the scan covers what it misses.)"""
        generation = await self._reset_topology()
        if self._subscribed is not None:
            await self._wait_listening(generation)

    async def _wait_listening(self, generation: int) -> None:
        """Until the listener's subscription answers `generation`, at most SUBSCRIBE_WAIT_S."""
        deadline = self._loop.time() + SUBSCRIBE_WAIT_S
        while self.expiry_events.listening < generation and self._loop.time() < deadline:
            self._subscribed.clear()
            await stopped_within(self._subscribed, deadline - self._loop.time())

    def _install_signal_handlers(self) -> dict:
        if threading.current_thread() is not threading.main_thread():
            return {}
        previous = {}
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.getsignal(signum)
            self._loop.add_signal_handler(signum, self.stop)
        return previous

    def _restore_signal_handlers(self, previous: dict) -> None:
        for signum, handler in previous.items():
            self._loop.remove_signal_handler(signum)
            signal.signal(signum, handler)

    async def _take(self, slots: asyncio.Semaphore) -> int:
        """Every free handler slot, waiting up to `block` for the first; how many."""
        try:
            await asyncio.wait_for(slots.acquire(), self.config.block)
        except asyncio.TimeoutError:
            return 0
        taken = 1
        while not slots.locked():
            await slots.acquire()
            taken += 1
        return taken

    async def _read_loop(self, slots: asyncio.Semaphore) -> None:
        c = self.config

        def give_back(count: int) -> None:
            for _ in range(count):
                slots.release()

        while not self._stopping.is_set():
            taken = await self._take(slots)
            if not taken:
                continue
            try:
                reply = await self.client.xreadgroup(c.group, c.consumer, {c.stream: ">"}, count=taken,
                                                     block=int(c.block * 1000))
            except redis.RedisError as error:
                if not read_again(error):
                    raise
                give_back(taken)
                log.warning("reading %s failed (retrying): %s", c.stream, error)
                await stopped_within(self._stopping, c.block)
                continue
            await self._start_entries(reply, taken, give_back, partial(self._spawn, slots))

    def _spawn(self, slots: asyncio.Semaphore, task: Task, job: InFlight) -> None:
        handling = asyncio.create_task(self._handle(slots, task, job), name=f"worker-handler-{task.id}")
        self._handlers.add(handling)
        handling.add_done_callback(self._handlers.discard)

    async def _handle(self, slots: asyncio.Semaphore, task: Task, job: InFlight) -> None:
        try:
            await self._run_handler(task, job)
        except Exception:  # noqa: BLE001 - one task's failure must not stop the others
            log.exception("a handler task failed outside its handler; its entry is left to recovery")
        finally:
            slots.release()

    async def _shut_down(self) -> None:
        """Stop reading (done), give handlers the shutdown timeout, requeue and cancel the rest."""
        if not self._handlers:
            return
        _, pending = await asyncio.wait(set(self._handlers), timeout=self.config.shutdown_timeout)
        if not pending:
            return
        await self._requeue_unfinished()
        for handling in pending:
            handling.cancel()
        await asyncio.wait(pending, timeout=CANCEL_WAIT_S)
