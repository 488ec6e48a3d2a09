"""The example pipeline's worker stage: a handler for `sluice-worker` that reads the
Spark job's window totals and raises an alert for each window whose views were worth
at least ALERT_AVERAGE on average (a big spender, or a pricey page).

    ALERTS_URL=redis://127.0.0.1:6379/0 sluice-worker examples.alerts:handle \\
        --url redis://127.0.0.1:6379/0 --stream totals --group alerts

An alert is an entry of the `alerts` stream naming the total it came from (`total`, the
total's original ID), so a total alerted twice shows as a repeated `total`."""
from __future__ import annotations

import os
from decimal import Decimal
from typing import Mapping

import redis

from sluice.worker import Task

ALERTS = "alerts"
DEFAULT_AVERAGE = Decimal("52")
# Where alerts go (connects on first use, shared by the worker's handler threads).
_client = redis.Redis.from_url(os.environ.get("ALERTS_URL", "redis://127.0.0.1:6379/0"))


def average(total: Mapping[str, str]) -> Decimal:
    """What one view in the total's window was worth on average."""
    return Decimal(total["amount"]) / int(total["events"])


def is_alert(total: Mapping[str, str], threshold: Decimal) -> bool:
    return int(total["events"]) > 0 and average(total) >= threshold


def handle(task: Task) -> None:
    """Alert on one total (run with decoded fields: sluice-worker's default)."""
    threshold = Decimal(os.environ.get("ALERT_AVERAGE", DEFAULT_AVERAGE))
    if not is_alert(task.fields, threshold):
        return
    _client.xadd(ALERTS, {**task.fields, "total": task.original_id,
                          "average": str(average(task.fields).quantize(Decimal("0.01")))})
