"""Counters of what the worker and its recovery did, named after the RFC's metrics
(the Prometheus exporter reads them next)."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields


@dataclass
class WorkerStats:
    tasks_done: int = 0
    tasks_failed: int = 0
    locks_lost: int = 0                      # a renewal found the lock gone or taken
    recovery_keyspace_requeued: int = 0
    recovery_scan_requeued: int = 0
    recovery_shutdown_requeued: int = 0
    recovery_scan_skipped_alive: int = 0
    recovery_duplicate_ack: int = 0          # XACK returned 0: already handled elsewhere
    recovery_dlq: int = 0
    recovery_dropped: int = 0                # past max retries with no DLQ
    scans: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
