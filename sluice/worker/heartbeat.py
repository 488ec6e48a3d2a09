"""Renews the locks of the entries being handled, every heartbeat interval, so a
slow handler keeps its entry for as long as its process lives."""
from __future__ import annotations

import logging
import threading

import redis

from sluice.worker.flows import resolve
from sluice.worker.scripts import Scripts
from sluice.worker.stats import WorkerStats

log = logging.getLogger("sluice.worker")


class Heartbeat:
    """The locks held (added when a handler starts, dropped when it ends) and their
    renewal: a periodic part (sluice/worker/background.py)."""

    name = "worker-heartbeat"

    def __init__(self, scripts: Scripts, interval: float, ttl_ms: int, stats: WorkerStats) -> None:
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

    def interval(self) -> float:
        return self._interval

    async def step(self) -> None:
        with self._guard:
            held = list(self._held.items())
        for lock, token in held:
            try:
                renewed = await resolve(self._scripts.renew(lock, token, self._ttl_ms))
            except redis.RedisError as error:
                log.warning("renewing %s failed (retrying next beat): %s", lock, error)
                continue
            if not renewed and self._forget(lock, token):
                # Expired before we renewed it: recovery may hand the entry to another worker.
                log.warning("lost %s: the handler's entry may run elsewhere too", lock)
                self._stats.add("locks_lost")

    def _forget(self, lock: str, token: str) -> bool:
        """Drops a lock whose renewal failed; False when its handler dropped it first.
        A handler drops its lock before it acknowledges (which deletes the lock), so a
        renewal that lost that race finds the lock dropped and is no loss."""
        with self._guard:
            if self._held.get(lock) != token:
                return False
            del self._held[lock]
            return True
