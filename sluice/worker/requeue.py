"""Requeueing one entry of one stream's group, with the outcome counted."""
from __future__ import annotations

import logging
from typing import Optional

from sluice.worker.config import WorkerConfig
from sluice.worker.flows import Maybe, then
from sluice.worker.keys import error_key, lock_key
from sluice.worker.scripts import RequeueResult, Scripts
from sluice.worker.stats import WorkerStats

log = logging.getLogger("sluice.worker")

# Which counter a requeue from each source raises.
_REQUEUED_COUNTER = {"keyspace": "recovery_keyspace_requeued", "scan": "recovery_scan_requeued",
                     "shutdown": "recovery_shutdown_requeued", "retry": "tasks_retried"}


class Requeuer:
    def __init__(self, config: WorkerConfig, scripts: Scripts, stats: WorkerStats) -> None:
        self._config = config
        self._scripts = scripts
        self._stats = stats

    def requeue(self, entry_id: str, source: str, reason: str, token: str = "") -> Maybe[RequeueResult]:
        """Requeue `entry_id` unless another owner holds its lock (`token` is ours, if any);
        an awaitable of the result with an asyncio client."""
        c = self._config
        reply = self._scripts.requeue(
            stream=c.stream, dlq=c.dlq, lock=lock_key(c.stream, entry_id),
            error=error_key(c.stream, entry_id), group=c.group, entry_id=entry_id,
            prefix=c.recovery.field_prefix, max_retries=c.recovery.max_retries,
            reason=reason, token=token)
        return then(reply, lambda result: self._record(entry_id, source, reason, result))

    def _record(self, entry_id: str, source: str, reason: str, result: RequeueResult) -> RequeueResult:
        """Counts and logs what the requeue script did."""
        c = self._config
        counter: Optional[str] = {
            "requeued": _REQUEUED_COUNTER[source], "dead": "recovery_dlq",
            "dropped": "recovery_dropped", "handled": "recovery_duplicate_ack",
            "alive": "recovery_scan_skipped_alive" if source == "scan" else None,
        }.get(result.outcome)
        if counter:
            self._stats.add(counter)
        if result.outcome == "requeued":
            log.info("%s %s: requeued as %s (%s)", c.stream, entry_id, result.new_id, reason)
        elif result.outcome == "dead":
            log.warning("%s %s: past %d retries, moved to %s as %s", c.stream, entry_id,
                        c.recovery.max_retries, c.dlq, result.new_id)
        elif result.outcome == "dropped":
            log.error("%s %s: past %d retries and no DLQ configured: dropped", c.stream, entry_id,
                      c.recovery.max_retries)
        elif result.outcome == "trimmed":
            log.warning("%s %s: trimmed before it could be requeued", c.stream, entry_id)
        return result
