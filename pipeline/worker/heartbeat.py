"""Renews the locks of the entries being handled, every heartbeat interval, so a
slow handler keeps its entry for as long as its process lives."""
from __future__ import annotations

import logging
import threading

import redis

from pipeline.worker.background import Background
from pipeline.worker.scripts import Scripts
from pipeline.worker.stats import WorkerStats

log = logging.getLogger("pipeline.worker")


class Heartbeat(Background):
    def __init__(self, scripts: Scripts, interval: float, ttl_ms: int, stats: WorkerStats) -> None:
        super().__init__("worker-heartbeat")
        self._scripts = scripts
        self._interval = interval
        self._ttl_ms = ttl_ms
        self._stats = stats
        self._held: dict[str, str] = {}          # lock key -> our token
        self._guard = threading.Lock()

    def hold(self, lock: str, token: str) -> None:
        with self._guard:
            self._held[lock] = token

    def drop(self, lock: str) -> None:
        with self._guard:
            self._held.pop(lock, None)

    def _forget(self, lock: str, token: str) -> bool:
        """Stop renewing a lock a renewal did not find; False when its handler finished
        (and released it) since this beat began: no loss then."""
        with self._guard:
            if self._held.get(lock) != token:
                return False
            del self._held[lock]
            return True

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            with self._guard:
                held = list(self._held.items())
            for lock, token in held:
                try:
                    renewed = self._scripts.renew(lock, token, self._ttl_ms)
                except redis.RedisError as error:
                    log.warning("renewing %s failed (retrying next beat): %s", lock, error)
                    continue
                if not renewed and self._forget(lock, token):
                    # Expired before we renewed it: recovery may hand the entry to another worker.
                    log.warning("lost %s: the handler's entry may run elsewhere too", lock)
                    self._stats.add("locks_lost")
