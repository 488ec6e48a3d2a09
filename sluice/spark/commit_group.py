"""Option `commitGroup`: a consumer group that follows a streaming query, so that
XINFO GROUPS (and any monitoring built on it) shows how far behind the query is.

The group is placed with XGROUP SETID ... ENTRIESREAD n, n being the stream's
entries-added count at the offset (kept in the offset itself, see offsets.StreamOffset):
Redis then reports lag = entries-added - n, the entries the query has not read. When the
count is unknown the group is placed without it and Redis shows what it can estimate."""
from __future__ import annotations

from typing import Optional

import redis

from sluice.spark.connection import Client
from sluice.spark.offsets import StreamOffset


def _has_group(client: Client, stream: str, group: str) -> Optional[bool]:
    """Whether `stream` has `group`; None when the stream does not exist."""
    try:
        groups = client.xinfo_groups(stream)
    except redis.ResponseError as exc:
        if "no such key" in str(exc).lower():
            return None
        raise
    names = {info["name"].decode("utf-8", "surrogateescape") if isinstance(info["name"], bytes) else info["name"]
             for info in groups}
    return group in names


def move_group(client: Client, stream: str, group: str, offset: StreamOffset) -> None:
    """Places `group` of `stream` at the offset, creating it there if missing. A stream that
    does not exist (deleted meanwhile) is left alone: the group would create it."""
    present = _has_group(client, stream, group)
    if present is None:
        return
    if present:
        client.xgroup_setid(stream, group, str(offset.last), entries_read=offset.added)
    else:
        client.xgroup_create(stream, group, str(offset.last), entries_read=offset.added)
