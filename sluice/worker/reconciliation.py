"""The periodic scan, the backstop that sees every topology: pending entries idle past
MinIdleTime whose lock is gone (their owner died) are requeued; those whose lock is
held belong to a slow but living worker and are left alone."""
from __future__ import annotations

import logging
import random
import time
from typing import Any

import redis

from sluice.worker.config import WorkerConfig
from sluice.worker.flows import Maybe, for_client, resolve
from sluice.worker.requeue import Requeuer
from sluice.worker.scripts import Scripts
from sluice.worker.stats import WorkerStats
from sluice.worker.task import text

log = logging.getLogger("sluice.worker")

SCAN_REASON = "pending past min_idle_time with no lock: its worker died"
# What the requeue script did when it took the entry out of the PEL.
_MOVED = ("requeued", "dead", "dropped")


class Reconciler:
    """The scan: once on start (`scan_once`), then as a periodic part
    (sluice/worker/background.py) every interval, with jitter so pods spread out."""

    name = "worker-reconcile"

    def __init__(self, client: Any, config: WorkerConfig, requeuer: Requeuer, scripts: Scripts,
                 stats: WorkerStats) -> None:
        self._client = client
        self._config = config
        self._requeuer = requeuer
        self._scripts = scripts
        self._stats = stats

    def scan_once(self) -> Maybe[int]:
        """One cycle: requeue up to batch_size stuck entries; how many were (an
        awaitable of it with an asyncio client)."""
        return for_client(self._client, self._scan())

    async def _scan(self) -> int:
        c, r = self._config, self._config.recovery
        started = time.monotonic()
        idle_ms = int(r.min_idle_time * 1000)
        start, requeued = "-", 0
        while requeued < r.batch_size:
            page = await resolve(self._client.xpending_range(c.stream, c.group, min=start, max="+",
                                                             count=r.batch_size, idle=idle_ms))
            for pending in page:
                result = await resolve(self._requeuer.requeue(text(pending["message_id"]), "scan", SCAN_REASON))
                requeued += result.outcome in _MOVED
                if requeued == r.batch_size:
                    break
            if len(page) < r.batch_size:
                break
            start = "(" + text(page[-1]["message_id"])
        if requeued:
            log.info("recovery scan of %s: %d entries of dead workers taken back", c.stream, requeued)
        if r.idle_consumer_timeout is not None:
            gone = await resolve(self._scripts.prune(c.stream, c.group,
                                                     int(r.idle_consumer_timeout * 1000), c.consumer))
            if gone:
                self._stats.add("consumers_removed", len(gone))
                log.info("%s: removed %d idle consumers with nothing pending from group %s: %s",
                         c.stream, len(gone), c.group, ", ".join(text(name) for name in gone))
        summary = await resolve(self._client.xpending(c.stream, c.group))
        self._stats.set("pel_depth", summary["pending"])
        lag = next((group.get("lag") for group in await resolve(self._client.xinfo_groups(c.stream))
                    if text(group["name"]) == c.group), None)
        if lag is not None:             # nil: Redis cannot tell (entries deleted past the group)
            self._stats.set("group_lag", lag)
        self._stats.add("recovery_scans")
        self._stats.observe("recovery_scan_duration_seconds", time.monotonic() - started)
        return requeued

    def interval(self) -> float:
        r = self._config.recovery
        return r.reconciliation_interval * random.uniform(1 - r.scan_jitter, 1 + r.scan_jitter)

    async def step(self) -> None:
        try:
            await self._scan()
        except redis.RedisError as error:
            log.warning("reconciliation scan of %s failed (next one in one interval): %s",
                        self._config.stream, error)
