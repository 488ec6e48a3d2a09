"""Running a Worker, or an AsyncWorker on an event loop of its own, in a thread of the
test process until `stop` (tests of sluice.worker)."""
from __future__ import annotations

import asyncio
import threading
from collections import Counter

from sluice.worker import AsyncWorker, Worker

JOIN_S = 15.0


class WorkerThread:
    """Starts the worker's `run` in a thread; `stop` (or the end of a `with` block) stops
    it. An AsyncWorker's client is closed on its loop when `run` returns."""

    def __init__(self, worker: Worker | AsyncWorker) -> None:
        self.worker = worker
        target = (lambda: asyncio.run(self._run_async())) if isinstance(worker, AsyncWorker) else worker.run
        self.thread = threading.Thread(target=target)
        self.thread.start()

    async def _run_async(self) -> None:
        try:
            await self.worker.run()
        finally:
            await self.worker.client.aclose()

    def stop(self) -> Counter:
        """Stops the worker; its stats."""
        self.worker.stop()
        self.thread.join(timeout=JOIN_S)
        assert not self.thread.is_alive(), "the worker did not stop"
        return Counter(self.worker.stats.snapshot())

    def __enter__(self) -> Worker | AsyncWorker:
        return self.worker

    def __exit__(self, *exc: object) -> None:
        self.stop()
