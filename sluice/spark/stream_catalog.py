"""Which streams a query reads and where each one stands, asked on the driver.

A stream named in option `streams` that does not exist reads as empty (with a warning in
the log), the way XREAD treats a missing key: streams are created by their first XADD, so
a job started before its producer is normal. A key of another type is an error."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import List, Optional

import redis
from redis.cluster import RedisCluster

from sluice.spark.connection import Client
from sluice.spark.offsets import EntryId
from sluice.spark.read_options import ReadOptions

log = logging.getLogger(__name__)
SCAN_COUNT = 1000


class StreamKeyError(ValueError):
    """A key the options name is not a stream; the message names the key and its type."""


@dataclass(frozen=True)
class StreamState:
    """One stream as XINFO STREAM describes it (None where the server does not say:
    max-deleted-entry-id and entries-added are Redis 7.0 fields)."""

    name: str
    exists: bool
    length: int = 0
    first: Optional[EntryId] = None
    last: Optional[EntryId] = None
    last_generated: EntryId = EntryId(0, 0)
    max_deleted: Optional[EntryId] = None
    entries_added: Optional[int] = None


def stream_names(client: Client, options: ReadOptions) -> List[str]:
    """The listed streams, or the keys of type stream matching the pattern (SCAN with TYPE;
    redis-py's cluster client scans every primary)."""
    if options.streams is not None:
        return list(options.streams)
    if isinstance(client, RedisCluster):
        found = client.scan_iter(match=options.pattern, count=SCAN_COUNT, _type="stream",
                                 target_nodes=RedisCluster.PRIMARIES)
    else:
        found = client.scan_iter(match=options.pattern, count=SCAN_COUNT, _type="stream")
    return sorted({key.decode("utf-8", "surrogateescape") if isinstance(key, bytes) else key for key in found})


def _entry_id(value: object, where: str) -> Optional[EntryId]:
    """An ID from an XINFO field (bytes or str), None when absent."""
    if value is None:
        return None
    return EntryId.parse(value if isinstance(value, (str, bytes)) else str(value), where)


def _first_id(entry: object, where: str) -> Optional[EntryId]:
    """The ID of XINFO's first-entry/last-entry, which redis-py gives as (id, fields)."""
    if not entry or not isinstance(entry, (tuple, list)) or entry[0] is None:
        return None
    return _entry_id(entry[0], where)


def check_stream_key(client: Client, name: str, option: str) -> None:
    """StreamKeyError when `name` holds another type than a stream (a missing key is fine:
    the first XADD creates it)."""
    kind = client.type(name)
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind not in ("stream", "none"):
        raise StreamKeyError(f"key {name!r} (option {option}) holds a {kind}, not a stream")


def stream_state(client: Client, name: str, option: str) -> StreamState:
    """Where `name` stands; raises StreamKeyError when it holds another type."""
    try:
        info = client.xinfo_stream(name)
    except redis.ResponseError as exc:
        message = str(exc)
        if message.startswith("WRONGTYPE"):
            check_stream_key(client, name, option)
            raise
        if "no such key" in message.lower():
            return StreamState(name, exists=False)
        raise
    where = f"XINFO STREAM {name}"
    return StreamState(
        name=name,
        exists=True,
        length=int(info.get("length", 0)),
        first=_first_id(info.get("first-entry"), where),
        last=_first_id(info.get("last-entry"), where),
        last_generated=_entry_id(info.get("last-generated-id"), where) or EntryId(0, 0),
        max_deleted=_entry_id(info.get("max-deleted-entry-id"), where),
        entries_added=int(info["entries-added"]) if info.get("entries-added") is not None else None,
    )


def stream_states(client: Client, options: ReadOptions) -> List[StreamState]:
    """The state of every stream the query reads, in name order; missing streams logged."""
    states = [stream_state(client, name, options.streams_option) for name in stream_names(client, options)]
    missing = [state.name for state in states if not state.exists]
    if missing:
        log.warning("sluice: stream(s) %s (option streams) do not exist on %s yet; they read as empty",
                    ", ".join(missing), options.address.shown)
    return states

