"""A fixed number of daemon threads running handlers: bounded concurrency, and a
shutdown that can give up on a handler without waiting for it to return."""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Callable

log = logging.getLogger("sluice.worker")


class HandlerPool:
    def __init__(self, size: int) -> None:
        self._jobs: queue.Queue = queue.Queue()
        self._free = threading.Semaphore(size)
        self._busy = 0
        self._idle = threading.Condition()
        self._threads = [threading.Thread(target=self._run, name=f"worker-handler-{n}", daemon=True)
                         for n in range(size)]
        for thread in self._threads:
            thread.start()

    def take(self, timeout: float) -> int:
        """Reserve every free slot, waiting up to `timeout` for the first; how many.
        Each is filled by `submit` or given back by `give_back`."""
        if not self._free.acquire(timeout=timeout):
            return 0
        taken = 1
        while self._free.acquire(blocking=False):
            taken += 1
        with self._idle:
            self._busy += taken
        return taken

    def give_back(self, slots: int) -> None:
        """Return slots taken but not used."""
        for _ in range(slots):
            self._finished()

    def submit(self, job: Callable[[], None]) -> None:
        self._jobs.put(job)

    def wait_idle(self, timeout: float) -> bool:
        """True once no job runs or waits; False if some still do after `timeout`."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self) -> None:
        """Let the threads end once the jobs queued before this are done (a handler
        given up on at shutdown still runs to its end, in the background)."""
        for _ in self._threads:
            self._jobs.put(None)

    def _finished(self) -> None:
        with self._idle:
            self._busy -= 1
            self._idle.notify_all()
        self._free.release()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:  # noqa: BLE001 - a job's failure must not shrink the pool
                log.exception("a handler job failed outside its handler; its entry is left to recovery")
            finally:
                self._finished()
