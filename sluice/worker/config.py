"""The worker's settings and the RFC's RecoveryConfig, checked once when built so a
misconfiguration fails at start-up instead of as duplicate or lost tasks later."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from sluice.worker.keys import dlq_key, same_slot

# MinIdleTime must leave room for at least this many lock TTLs: an entry whose owner is
# alive keeps its lock, but a scan that fires just as a heartbeat is late must not act.
MIN_IDLE_TTL_RATIO = 2.0
RETRY_BACKOFFS = ("immediate", "fixed", "exponential", "lock")


class ConfigError(ValueError):
    """A worker or recovery setting that cannot work; the message says which and why."""


@dataclass(frozen=True)
class RecoveryConfig:
    """How stuck entries are found and requeued (times in seconds)."""

    reconciliation_interval: float = 60.0   # between periodic scans; one also runs on start
    min_idle_time: float = 30.0             # pending entries idle longer are scan candidates
    batch_size: int = 50                    # most entries requeued per scan cycle
    max_retries: int = 3                    # requeues before the entry goes to the DLQ
    dlq_stream: Optional[str] = None        # None: "{stream}:dlq"; "": no DLQ (logged, dropped)
    field_prefix: str = "_"                 # of the library's fields: _retry_count, _original_id
    scan_jitter: float = 0.1                # +- this fraction of the interval, so pods spread out
    keyspace_listener: bool = True          # the fast path on lock-key `expired` events
    idle_consumer_timeout: Optional[float] = 86400.0   # scans remove consumers with nothing
                                            # pending idle this long (None: never)
    retry_backoff: str = "exponential"      # when a failed task is requeued: "immediate",
                                            # "fixed" (retry_delay), "exponential" (retry_delay
                                            # doubled per retry, up to retry_delay_max), or
                                            # "lock" (once its lock expires: lock_ttl)
    retry_delay: float = 1.0
    retry_delay_max: float = 60.0

    def __post_init__(self) -> None:
        _positive("reconciliation_interval", self.reconciliation_interval)
        _positive("min_idle_time", self.min_idle_time)
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {self.batch_size!r}")
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ConfigError(f"max_retries must be an integer >= 0, got {self.max_retries!r}")
        if not self.field_prefix:
            raise ConfigError("field_prefix must not be empty: the library's fields would "
                              "collide with the task's own (use the default '_')")
        if self.idle_consumer_timeout is not None:
            _positive("idle_consumer_timeout", self.idle_consumer_timeout)
        if self.retry_backoff not in RETRY_BACKOFFS:
            raise ConfigError(f"retry_backoff must be one of {', '.join(RETRY_BACKOFFS)}, "
                              f"got {self.retry_backoff!r}")
        _positive("retry_delay", self.retry_delay)
        if self.retry_backoff == "exponential" and (
                not isinstance(self.retry_delay_max, (int, float)) or self.retry_delay_max < self.retry_delay):
            raise ConfigError(f"retry_delay_max must be at least retry_delay ({self.retry_delay} s), "
                              f"got {self.retry_delay_max!r}")
        if not 0 <= self.scan_jitter < 1:
            raise ConfigError(f"scan_jitter must be in [0, 1), got {self.scan_jitter!r}")


@dataclass(frozen=True)
class WorkerConfig:
    """One consumer of one stream's group (times in seconds)."""

    stream: str
    group: str
    consumer: str
    concurrency: int = 16                   # handlers running at once (threads or asyncio tasks);
                                            # also the most entries one XREADGROUP reads
    lock_ttl: float = 10.0                  # a lock left unrenewed this long frees its entry
    heartbeat_interval: Optional[float] = None   # None: lock_ttl / 2
    block: float = 1.0                      # XREADGROUP BLOCK; also how fast a stop is seen
    shutdown_timeout: float = 10.0          # in-flight handlers get this long on SIGTERM
    metrics_port: Optional[int] = None      # serve Prometheus /metrics here (0: any free port)
    metrics_host: str = "0.0.0.0"           # the address /metrics listens on
    recovery: RecoveryConfig = field(default_factory=RecoveryConfig)

    def __post_init__(self) -> None:
        for name in ("stream", "group", "consumer"):
            if not getattr(self, name):
                raise ConfigError(f"{name} must be a non-empty string")
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ConfigError(f"concurrency must be a positive integer, got {self.concurrency!r}")
        _positive("lock_ttl", self.lock_ttl)
        port = self.metrics_port
        if port is not None and not (isinstance(port, int) and 0 <= port <= 65535):
            raise ConfigError(f"metrics_port must be a port number (0-65535, 0: any free one) or None, "
                              f"got {self.metrics_port!r}")
        _positive("block", self.block)
        if self.shutdown_timeout < 0:
            raise ConfigError(f"shutdown_timeout must be >= 0, got {self.shutdown_timeout!r}")
        if self.heartbeat_interval is not None:
            _positive("heartbeat_interval", self.heartbeat_interval)
            if self.heartbeat_interval >= self.lock_ttl:
                raise ConfigError(
                    f"heartbeat_interval ({self.heartbeat_interval} s) must be below lock_ttl "
                    f"({self.lock_ttl} s), or locks expire between renewals (default: lock_ttl / 2)")
        if self.recovery.min_idle_time < MIN_IDLE_TTL_RATIO * self.lock_ttl:
            raise ConfigError(
                f"recovery.min_idle_time ({self.recovery.min_idle_time} s) must be at least "
                f"{MIN_IDLE_TTL_RATIO:g} x lock_ttl ({self.lock_ttl} s): the scan would otherwise "
                f"judge entries while their owner's lock is still being renewed")
        dlq = self.dlq
        if dlq and not same_slot(dlq, self.stream):
            raise ConfigError(
                f"recovery.dlq_stream {dlq!r} does not share the hash slot of {self.stream!r}: "
                f"the requeue script writes both at once, so give it the stream's hash tag "
                f"(e.g. {dlq_key(self.stream)!r})")

    @property
    def heartbeat(self) -> float:
        """Seconds between lock renewals."""
        return self.heartbeat_interval if self.heartbeat_interval is not None else self.lock_ttl / 2

    @property
    def dlq(self) -> str:
        """The dead-letter stream's key, or "" when there is none."""
        configured = self.recovery.dlq_stream
        return dlq_key(self.stream) if configured is None else configured


def _positive(name: str, value: float) -> None:
    if not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{name} must be a positive number of seconds, got {value!r}")
