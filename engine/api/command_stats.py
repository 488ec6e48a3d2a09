"""INFO commandstats of the commands that go through process_command: the server's
slow path (engine/server/connection.py) and scripts' redis.call (engine/api/scripts.py)
count them the same way. (The server's fast path counts its engine commands itself.)"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from engine.commands.table import classify

if TYPE_CHECKING:  # pragma: no cover
    from engine.api.session import Session


def count_call(stats: Any, session: "Session", argv: list, ns: int,
               failed: bool) -> Optional[str]:
    """INFO commandstats of a command that went through process_command (`stats`: the
    server's Stats): its call and time, or the refusal before it ran (rejected_calls),
    or its failure (failed_calls). Returns its full name (None for an unknown command,
    which counts nowhere)."""
    name, rejected = session.cmd_name, session.rejected
    if name is None:
        name, refused = classify(argv)
        rejected = failed and (rejected or refused)
    if name is not None:
        if failed:
            stats.failure(name, rejected, ns)
        else:
            stats.command(name).add_call(ns)
    return name
