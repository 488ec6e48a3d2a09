"""The periodic scan, the backstop that sees every topology: pending entries idle past
MinIdleTime whose lock is gone (their owner died) are requeued; those whose lock is
held belong to a slow but living worker and are left alone."""
from __future__ import annotations

import logging
import random
import time
from typing import Any

import redis

from pipeline.worker.background import Background
from pipeline.worker.config import WorkerConfig
from pipeline.worker.requeue import Requeuer
from pipeline.worker.stats import WorkerStats
from pipeline.worker.task import text

log = logging.getLogger("pipeline.worker")

SCAN_REASON = "pending past min_idle_time with no lock: its worker died"


class Reconciler(Background):
    def __init__(self, client: Any, config: WorkerConfig, requeuer: Requeuer, stats: WorkerStats) -> None:
        super().__init__("worker-reconcile")
        self._client = client
        self._config = config
        self._requeuer = requeuer
        self._stats = stats

    def scan_once(self) -> int:
        """One cycle: requeue up to batch_size stuck entries; returns how many were."""
        c, r = self._config, self._config.recovery
        started = time.monotonic()
        idle_ms = int(r.min_idle_time * 1000)
        start, requeued = "-", 0
        while requeued < r.batch_size:
            page = self._client.xpending_range(c.stream, c.group, min=start, max="+",
                                               count=r.batch_size, idle=idle_ms)
            for pending in page:
                entry_id = text(pending["message_id"])
                if self._requeuer.requeue(entry_id, "scan", SCAN_REASON).outcome in ("requeued", "dead", "dropped"):
                    requeued += 1
                    if requeued == r.batch_size:
                        break
            if len(page) < r.batch_size:
                break
            start = "(" + text(page[-1]["message_id"])
        self._stats.set("pel_depth", self._client.xpending(c.stream, c.group)["pending"])
        self._stats.add("recovery_scans")
        self._stats.observe("recovery_scan_duration_seconds", time.monotonic() - started)
        return requeued

    def _run(self) -> None:
        r = self._config.recovery
        while not self._stop.wait(r.reconciliation_interval * random.uniform(1 - r.scan_jitter, 1 + r.scan_jitter)):
            try:
                self.scan_once()
            except redis.RedisError as error:
                log.warning("reconciliation scan of %s failed (next one in one interval): %s",
                            self._config.stream, error)
