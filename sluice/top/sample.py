"""One reading of a server: its INFO figures and, for every stream, its length, entries
added, memory and groups (lag, pending, the oldest pending entry's idle time, consumers'
idle times). Cheap on the server: SCAN TYPE stream a page at a time, and the XINFO
calls of a page in one pipeline, then those of its groups in another."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import List, Optional

import redis

SCAN_PAGE = 200
DLQ_SUFFIX = ":dlq"     # sluice.worker's dead-letter streams: `{stream}:dlq` (keys.dlq_key)


@dataclass
class ConsumerReading:
    name: str
    pending: int
    idle_ms: int


@dataclass
class GroupReading:
    name: str
    lag: Optional[int]              # None when the server cannot tell (Redis's XINFO says nil)
    pending: int
    oldest_pending_idle_ms: Optional[int]   # since the oldest pending entry's last delivery
    consumers: List[ConsumerReading] = field(default_factory=list)


@dataclass
class StreamReading:
    name: str
    length: int
    entries_added: int
    memory: Optional[int]
    groups: List[GroupReading] = field(default_factory=list)

    @property
    def dead_letters(self) -> bool:
        """Whether this is a worker's dead-letter stream."""
        return self.name.endswith(DLQ_SUFFIX)


@dataclass
class ServerReading:
    version: str
    engine: str                     # "sluice" or "redis"
    commands_processed: int
    ops_per_sec: int
    clients: int
    used_memory: int
    persistence: dict


@dataclass
class Sample:
    taken: float                    # time.time() when taken
    server: ServerReading
    streams: List[StreamReading]


PERSISTENCE_FIELDS = ("loading", "aof_enabled", "aof_rewrite_in_progress", "aof_last_write_status",
                      "rdb_bgsave_in_progress", "rdb_changes_since_last_save", "rdb_last_save_time",
                      "rdb_last_bgsave_status")


def raw(name: str) -> bytes:
    """A name as the server has it: replies decode with surrogateescape (sluice.top.cli),
    and bytes that are not UTF-8 go back as they came."""
    return name.encode("utf-8", "surrogateescape")


def read_server(client: redis.Redis) -> ServerReading:
    info = client.info("everything")
    return ServerReading(
        version=str(info.get("sluice_version") or info.get("redis_version")),
        engine="sluice" if "sluice_version" in info else "redis",
        commands_processed=int(info.get("total_commands_processed", 0)),
        ops_per_sec=int(info.get("instantaneous_ops_per_sec", 0)),
        clients=int(info.get("connected_clients", 0)),
        used_memory=int(info.get("used_memory", 0)),
        persistence={name: info[name] for name in PERSISTENCE_FIELDS if name in info})


def stream_names(client: redis.Redis) -> List[str]:
    """Every stream key of the database, a SCAN page at a time."""
    names: List[str] = []
    cursor = 0
    while True:
        cursor, page = client.scan(cursor, count=SCAN_PAGE, _type="stream")
        names.extend(page)
        if int(cursor) == 0:
            return sorted(set(names))


def read_streams(client: redis.Redis, names: List[str]) -> List[StreamReading]:
    """The streams' figures: three calls a stream in one pipeline, two a group in another.
    A stream deleted between SCAN and XINFO is left out."""
    streams: List[StreamReading] = []
    for start in range(0, len(names), SCAN_PAGE):
        page = names[start:start + SCAN_PAGE]
        pipe = client.pipeline(transaction=False)
        for name in page:
            pipe.xinfo_stream(raw(name))
            pipe.xinfo_groups(raw(name))
            pipe.memory_usage(raw(name))
        replies = pipe.execute(raise_on_error=False)
        read: List[StreamReading] = []
        for index, name in enumerate(page):
            info, groups, memory = replies[3 * index:3 * index + 3]
            if isinstance(info, Exception) or isinstance(groups, Exception):
                continue
            stream = StreamReading(name, int(info["length"]), int(info.get("entries-added", info["length"])),
                                   None if isinstance(memory, Exception) else memory)
            stream.groups = [GroupReading(str(g["name"]), g.get("lag"), int(g["pending"]), None)
                             for g in groups]
            read.append(stream)
        _read_groups(client, read)
        streams.extend(read)
    return streams


def _read_groups(client: redis.Redis, streams: List[StreamReading]) -> None:
    pipe = client.pipeline(transaction=False)
    places = [(stream, group) for stream in streams for group in stream.groups]
    for stream, group in places:
        pipe.xinfo_consumers(raw(stream.name), raw(group.name))
        pipe.xpending_range(raw(stream.name), raw(group.name), "-", "+", 1)
    replies = pipe.execute(raise_on_error=False)
    for index, (stream, group) in enumerate(places):
        consumers, oldest = replies[2 * index:2 * index + 2]
        if not isinstance(consumers, Exception):
            group.consumers = [ConsumerReading(str(c["name"]), int(c["pending"]), int(c["idle"]))
                               for c in consumers]
        if not isinstance(oldest, Exception) and oldest:
            group.oldest_pending_idle_ms = int(oldest[0]["time_since_delivered"])


def take_sample(client: redis.Redis) -> Sample:
    """The server's figures and its streams', now."""
    server = read_server(client)
    return Sample(time.time(), server, read_streams(client, stream_names(client)))
