"""A failed task's retry after a delay (RecoveryConfig.retry_backoff): the worker keeps
the task's lock renewed while the delay runs, then requeues the entry itself, so a retry
need not wait for the lock to expire. Should the worker die meanwhile, the lock expires
and recovery requeues the entry as for any dead worker's."""
from __future__ import annotations

import heapq
import logging
import threading
import time
from typing import NamedTuple

import redis

from sluice.worker.config import RecoveryConfig
from sluice.worker.flows import resolve
from sluice.worker.heartbeat import Heartbeat
from sluice.worker.requeue import Requeuer

log = logging.getLogger("sluice.worker")

IDLE_TICK_S = 0.25          # the longest wait before the part looks for new retries


def retry_delay(recovery: RecoveryConfig, retry_count: int) -> float:
    """Seconds before the retry of a task that failed after `retry_count` earlier retries."""
    if recovery.retry_backoff == "immediate":
        return 0.0
    if recovery.retry_backoff == "fixed":
        return recovery.retry_delay
    return min(recovery.retry_delay_max, recovery.retry_delay * 2.0 ** min(retry_count, 62))


class Due(NamedTuple):
    at: float               # time.monotonic() when it is due
    entry_id: str
    lock: str
    token: str
    error: str


class Retrier:
    """The failed tasks waiting for their retry: a periodic part
    (sluice/worker/background.py) that requeues each when due, and all at shutdown."""

    name = "worker-retry"

    def __init__(self, heartbeat: Heartbeat, requeuer: Requeuer) -> None:
        self._heartbeat = heartbeat
        self._requeuer = requeuer
        self._due: list[Due] = []
        self._guard = threading.Lock()

    def schedule(self, delay: float, entry_id: str, lock: str, token: str, error: str) -> None:
        """Requeue the entry in `delay` seconds; its lock (ours) stays renewed until then."""
        with self._guard:
            heapq.heappush(self._due, Due(time.monotonic() + delay, entry_id, lock, token, error))

    def interval(self) -> float:
        """Until the next retry is due, or IDLE_TICK_S at most (new ones may come)."""
        with self._guard:
            if not self._due:
                return IDLE_TICK_S
            return min(IDLE_TICK_S, max(0.0, self._due[0].at - time.monotonic()))

    async def step(self) -> None:
        await self._requeue(time.monotonic())

    async def flush(self) -> None:
        """Shutdown: every waiting retry now (the worker is going, its locks with it)."""
        await self._requeue(float("inf"))

    async def _requeue(self, now: float) -> None:
        while True:
            with self._guard:
                if not self._due or self._due[0].at > now:
                    return
                due = heapq.heappop(self._due)
            # Renewals stop first: the requeue deletes the lock.
            self._heartbeat.drop(due.lock)
            try:
                await resolve(self._requeuer.requeue(due.entry_id, "retry", due.error, token=due.token))
            except redis.RedisError as error:
                log.warning("%s: retry not requeued (its lock expires, then recovery requeues "
                            "it): %s", due.entry_id, error)
