"""Exactly-once writes of the `sluice` sink: each row whose ID the server picks goes out
as `XADD stream IDMP producer iid * ...` (Redis 8.6's idempotent production, which
Sluice has), so a retried or speculative task, or a micro-batch replayed after a
restart, adds nothing it already added: the server answers a known (producer, iid)
with the entry it produced the first time.

How a row is named. Every attempt of a task sees the same rows of its partition in
the same order, so by default a row is named by its place: producer
`spark:<prefix>:<epoch>:<partition>:<chunk>` and iid its position in the partition,
a new chunk every IDMP-MAXSIZE rows (a stream keeps that many iids per producer).
With option `idempotencyKey` (a column whose values are unique per row) a row is named
by its value, whatever partition, position or micro-batch it comes in: producer
`spark:<prefix>:k<bucket>`, the bucket a CRC-32 of the value, so each producer keeps
its share of the values.
`prefix` is option `producerId`; else a streaming query's ID (kept in its checkpoint,
so a restart that replays micro-batch N names its rows as the first run did), else
an ID drawn when a batch write is planned (its task retries share it). `epoch` is the
micro-batch ID (also for a batch write inside foreachBatch, which then needs a
`producerId` to be named alike when replayed), else 0.

The window. A stream forgets an iid `IDMP-DURATION` seconds after its entry was added,
and a producer's oldest iids past `IDMP-MAXSIZE`. Before a task's first row to a
stream, one script creates the stream if it is missing (empty: XCFGSET needs it) and
sets both (options `idmpDuration`, `idmpMaxSize`) where they differ, as XCFGSET forgets
the stream's iids: writers of one stream should agree on them.
"""
from __future__ import annotations

import uuid
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Optional, Tuple

import redis
from redis.cluster import RedisCluster

from sluice.spark.options import OptionError, bool_option, int_option, text_option

if TYPE_CHECKING:
    from sluice.spark.connection import Client

IDEMPOTENCE_OPTIONS = ("idempotent", "idempotencyKey", "producerId", "idmpDuration",
                       "idmpMaxSize")
"""The sink's options of its idempotent writes (XADD ... IDMP)."""
DEFAULT_DURATION_S = 3600          # retries and restarts within an hour of the first write
DURATION_MAX_S = 86400             # the server's bounds
MAXSIZE_MAX = 10000
KEY_BUCKETS = 256                  # producers per prefix for idempotencyKey rows
QUERY_ID_PROPERTY = "sql.streaming.queryId"      # Spark's local properties of a
BATCH_ID_PROPERTY = "streaming.sql.batchId"      # micro-batch's tasks
MKSTREAM_GROUP = "sluice-idmp-mkstream"

# KEYS[1] the stream; ARGV duration, maxsize. Creates the stream when missing (a group
# made and dropped: no entry), then XCFGSET where the settings differ. A key of another
# type is left to the XADD, whose WRONGTYPE names the stream and the row.
SETTINGS_SCRIPT = f"""
local key = KEYS[1]
local kind = redis.call('TYPE', key).ok
if kind == 'none' then
  redis.call('XGROUP', 'CREATE', key, '{MKSTREAM_GROUP}', '$', 'MKSTREAM')
  redis.call('XGROUP', 'DESTROY', key, '{MKSTREAM_GROUP}')
elseif kind ~= 'stream' then
  return 0
end
local info = redis.call('XINFO', 'STREAM', key)
local have = {{}}
for i = 1, #info, 2 do have[info[i]] = info[i + 1] end
if have['idmp-duration'] ~= tonumber(ARGV[1]) or have['idmp-maxsize'] ~= tonumber(ARGV[2]) then
  redis.call('XCFGSET', key, 'IDMP-DURATION', ARGV[1], 'IDMP-MAXSIZE', ARGV[2])
end
return 1
"""


class NoIdempotenceError(RuntimeError):
    """The server has no XADD IDMP (Redis before 8.6) and option idempotent asks for it."""


@dataclass(frozen=True)
class Idempotence:
    """How the rows of one write are named; made on the driver, pickled to the tasks."""

    prefix: Optional[str]              # None: a streaming query's ID, read in each task
    key_column: Optional[str]
    duration: int
    maxsize: int

    def settings(self) -> Tuple[str, str]:
        return str(self.duration), str(self.maxsize)


def plan_idempotence(options: Mapping[str, str], columns: Mapping[str, object],
                     streaming: bool) -> Optional[Idempotence]:
    """The naming of this write's rows, None with option idempotent=false; OptionError
    for a bad option. `columns`: the DataFrame's fields by lower-cased name."""
    if not bool_option(options, "idempotent", True):
        return None
    key = text_option(options, "idempotencyKey")
    if key is not None and key.lower() not in columns:
        raise OptionError(f"option idempotencyKey names column {key!r}, which the DataFrame "
                          f"does not have")
    duration = int_option(options, "idmpDuration", DEFAULT_DURATION_S)
    maxsize = int_option(options, "idmpMaxSize", MAXSIZE_MAX)
    if duration > DURATION_MAX_S:
        raise OptionError(f"option idmpDuration must be at most {DURATION_MAX_S} seconds, not {duration}")
    if maxsize > MAXSIZE_MAX:
        raise OptionError(f"option idmpMaxSize must be at most {MAXSIZE_MAX}, not {maxsize}")
    prefix = text_option(options, "producerId")
    if prefix is None and not streaming:
        prefix = uuid.uuid4().hex
    return Idempotence(prefix, columns[key.lower()].name if key else None, duration, maxsize)


def check_idempotence(client: "Client", shown: str) -> None:
    """On the driver: NoIdempotenceError when the server does not know XCFGSET, naming
    the way out. (XCFGSET with a key alone: an error either way, and nothing changes.)"""
    nodes = {"target_nodes": RedisCluster.RANDOM} if isinstance(client, RedisCluster) else {}
    try:
        client.execute_command("XCFGSET", "sluice:idmp-probe", **nodes)
    except redis.ResponseError as exc:
        if "unknown command" not in str(exc).lower():
            return
    raise NoIdempotenceError(
        f"the server at {shown} (option url) has no idempotent production (XADD ... IDMP, "
        f"Redis 8.6 and Sluice have it), which the sink uses to write each row exactly once; "
        f"set option idempotent to false to write at least once (a retried task writes its "
        f"rows again)")


class RowNames:
    """One task's producer and iid for each row it writes (see the module's docstring)."""

    def __init__(self, idempotence: Idempotence) -> None:
        from pyspark import TaskContext  # noqa: PLC0415 - executors only

        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        prefix = idempotence.prefix
        if prefix is None and context is not None:
            prefix = context.getLocalProperty(QUERY_ID_PROPERTY)
        epoch = (context.getLocalProperty(BATCH_ID_PROPERTY) if context is not None else None) or "0"
        self.idempotence = idempotence
        self.base = f"spark:{prefix or 'query'}"
        self.by_place = f"{self.base}:{epoch}:{partition}"
        self.position = 0
        self.configured: set = set()

    def name(self, key: Optional[object]) -> Tuple[str, str]:
        """(producer, iid) of the next row; `key` its idempotencyKey value (not null)."""
        position, self.position = self.position, self.position + 1
        if self.idempotence.key_column is None:
            return f"{self.by_place}:{position // self.idempotence.maxsize}", str(position)
        iid = key if isinstance(key, (str, bytes)) else str(key)
        data = iid.encode() if isinstance(iid, str) else iid
        return f"{self.base}:k{zlib.crc32(data) % KEY_BUCKETS}", iid

    def prepare(self, client: "Client", stream: str) -> None:
        """Before the task's first row to `stream`: the stream's IDMP settings."""
        if stream not in self.configured:
            client.eval(SETTINGS_SCRIPT, 1, stream, *self.idempotence.settings())
            self.configured.add(stream)


__all__ = ["Idempotence", "NoIdempotenceError", "RowNames", "check_idempotence", "plan_idempotence"]
