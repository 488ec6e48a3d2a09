"""Option `failOnDataLoss`: what a reader does when entries it was to return are gone
(trimmed or deleted after the checkpoint, or between planning a read and its task)."""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)
HINT = "set option failOnDataLoss to false to skip them"


class DataLossError(RuntimeError):
    """Entries a read was to return were removed before it read them."""


def on_data_loss(reason: str, fail: bool) -> None:
    """Raises DataLossError with `reason` (fail), or logs it as a warning and lets the
    read go on without the lost entries."""
    if fail:
        raise DataLossError(f"{reason}; {HINT}")
    log.warning("sluice: %s; failOnDataLoss is false: going on", reason)
