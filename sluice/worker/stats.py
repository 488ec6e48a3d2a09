"""What the worker and its recovery did: counters named after the RFC's metrics, the
PEL depth the last scan saw, and timings. This is the one place that counts: tests read
the fields, and each change is passed on to the sink (the Prometheus metrics), so the
two never disagree."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields
from typing import Optional, Protocol


class StatsSink(Protocol):
    """Where every change of the stats is mirrored (sluice.worker.metrics)."""

    def add(self, name: str, amount: int) -> None: ...
    def set(self, name: str, value: int) -> None: ...
    def observe(self, name: str, seconds: float) -> None: ...


@dataclass
class WorkerStats:
    tasks_done: int = 0
    tasks_failed: int = 0
    tasks_retried: int = 0                   # failed tasks the worker requeued after their delay
    locks_lost: int = 0                      # a renewal found the lock gone or taken
    recovery_keyspace_requeued: int = 0
    recovery_scan_requeued: int = 0
    recovery_shutdown_requeued: int = 0
    recovery_scan_skipped_alive: int = 0
    recovery_duplicate_ack: int = 0          # XACK returned 0: already handled elsewhere
    recovery_dlq: int = 0
    recovery_dropped: int = 0                # past max retries with no DLQ
    recovery_scans: int = 0
    consumers_removed: int = 0               # idle consumers with nothing pending, removed
    pel_depth: int = 0                       # a gauge: the group's pending count at the last
                                             # read, acknowledgement or scan
    group_lag: int = 0                       # a gauge: entries not yet delivered to the group,
                                             # at the last scan (XINFO GROUPS lag)
    # Not stats (compare=False keeps them out of the snapshot).
    sink: Optional[StatsSink] = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)
        if self.sink is not None:
            self.sink.add(name, amount)

    def set(self, name: str, value: int) -> None:
        """A gauge's new value."""
        with self._lock:
            setattr(self, name, value)
        if self.sink is not None:
            self.sink.set(name, value)

    def observe(self, name: str, seconds: float) -> None:
        """A duration (how many there were is a counter: tasks done + failed, scans)."""
        if self.sink is not None:
            self.sink.observe(name, seconds)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
