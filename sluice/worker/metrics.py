"""The worker's Prometheus metrics: the RFC's recovery counters, the PEL depth and the
group's lag, tasks done and failed and handler time, labelled with stream, group and
consumer (the PEL depth and the lag, properties of the group, with stream and group). They mirror WorkerStats's
changes (it is the sink), and can be served on /metrics by prometheus-client's server.

Each worker gets a registry of its own unless given one; workers given the same
registry share its metric families, one labelled series each."""
from __future__ import annotations

import threading
import weakref
from typing import Optional

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

# WorkerStats counter -> what it counts; the metric is named after it, plus `_total`.
COUNTERS = {
    "tasks_done": "Tasks whose handler returned, then acknowledged",
    "tasks_failed": "Tasks whose handler raised, left pending for a retry",
    "tasks_retried": "Failed tasks requeued by their worker once their retry delay passed",
    "locks_lost": "Lock renewals that found the lock gone or taken (the task may run twice)",
    "recovery_keyspace_requeued": "Entries requeued by the lock-expiry (keyspace event) listener",
    "recovery_scan_requeued": "Entries requeued by the periodic reconciliation scan",
    "recovery_shutdown_requeued": "Entries requeued at shutdown, their handler unfinished",
    "recovery_scan_skipped_alive": "Pending entries the scan left alone because their lock was held",
    "recovery_duplicate_ack": "Requeues that found the entry already acknowledged (XACK returned 0)",
    "recovery_dlq": "Entries moved to the dead-letter stream past max_retries",
    "recovery_dropped": "Entries dropped past max_retries, with no dead-letter stream",
    "recovery_scans": "Reconciliation scans run",
    "consumers_removed": "Idle consumers with nothing pending that scans removed from the group",
}
HISTOGRAMS = {
    "handler_duration_seconds": "Time a handler ran, whether it returned or raised",
    "recovery_scan_duration_seconds": "Time of one reconciliation scan",
}
GAUGES = {"pel_depth": "Entries pending in the group (delivered, not acknowledged) at the "
                       "last read, acknowledgement or scan",
          "group_lag": "Entries of the stream not yet delivered to the group at the last scan "
                       "(XINFO GROUPS lag; kept when the server cannot tell)"}
LABELS = ("stream", "group", "consumer")
GROUP_LABELS = ("stream", "group")


class _Families:
    """The metric families of one registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.counters = {name: Counter(name, text, LABELS, registry=registry)
                         for name, text in COUNTERS.items()}
        self.histograms = {name: Histogram(name, text, LABELS, registry=registry)
                           for name, text in HISTOGRAMS.items()}
        self.gauges = {name: Gauge(name, text, GROUP_LABELS, registry=registry)
                       for name, text in GAUGES.items()}


_families: "weakref.WeakKeyDictionary[CollectorRegistry, _Families]" = weakref.WeakKeyDictionary()
_families_guard = threading.Lock()


def _families_of(registry: CollectorRegistry) -> _Families:
    with _families_guard:
        if registry not in _families:
            _families[registry] = _Families(registry)
        return _families[registry]


class WorkerMetrics:
    """One worker's series; a StatsSink."""

    def __init__(self, stream: str, group: str, consumer: str,
                 registry: Optional[CollectorRegistry] = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        families = _families_of(self.registry)
        labels = (stream, group, consumer)
        # Children are made now, so every series reads 0 before anything happens.
        self._counters = {n: f.labels(*labels) for n, f in families.counters.items()}
        self._histograms = {n: f.labels(*labels) for n, f in families.histograms.items()}
        self._gauges = {n: f.labels(stream, group) for n, f in families.gauges.items()}

    def add(self, name: str, amount: int) -> None:
        self._counters[name].inc(amount)

    def set(self, name: str, value: int) -> None:
        self._gauges[name].set(value)

    def observe(self, name: str, seconds: float) -> None:
        self._histograms[name].observe(seconds)


class MetricsEndpoint:
    """prometheus-client's HTTP server for one registry, on a port (0: any free one)."""

    def __init__(self, registry: CollectorRegistry, port: int, host: str) -> None:
        self._server, self._thread = start_http_server(port, host, registry=registry)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
