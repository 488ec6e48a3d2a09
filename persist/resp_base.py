"""The engine's state as RESP commands: the AOF base file when
`aof-use-rdb-preamble no`, and the way data moves between Sluice and redis-server.

Follows what Redis 7's own AOF rewrite emits (rewriteAppendOnlyFileRio), so that
redis-server 7.0 and Sluice replay the file into the same state: SELECT before each
non-empty database; `SET key value [PXAT ms]` for strings; for streams the commands
of RespWriter.stream (snapshot_codec.pyx), for collections (lists, hashes, sets...)
the commands engine.formats.rewrite recreates them with, then `PEXPIREAT` when the key
has a TTL. Expiry times are absolute, so a replay does not depend on when it runs.
Consumers' seen/active times are not carried (Redis's rewrite does not either).
A stream whose counters XSETID / XGROUP CREATE would refuse or change (wrapped past
INT64_MAX as Redis's do, or entries-read above entries-added) goes as one
`RESTORE key 0 payload` instead, in the RDB version redis-server 7.0 reads.
A stream that used idempotent production (XADD IDMP, Redis 8.6) also gets XCFGSET and
XIDMPRECORD commands (Redis 8.6 / 8.8): redis-server 7.0 does not know them and cannot
load such a base.
"""
from __future__ import annotations

from typing import BinaryIO

from engine.core.value_types import COLLECTION_CLASSES
from engine.formats.rewrite import recreate_commands
from persist.snapshot_codec import RespWriter

__all__ = ["write_resp_base"]


def write_resp_base(engine, fileobj: BinaryIO) -> int:
    """Writes every database of `engine` as RESP commands onto `fileobj`; returns
    the number of bytes written. The engine must not change meanwhile."""
    out = RespWriter(fileobj)
    for code in engine.function_codes():
        out.command(b"FUNCTION", b"LOAD", code)
    for db in engine.databases:
        if not len(db):
            continue
        out.command(b"SELECT", db.index)
        for key, value, when in db.items():
            if type(value) is bytes:
                if when is None:
                    out.command(b"SET", key, value)
                else:
                    out.command(b"SET", key, value, b"PXAT", when)
                continue
            if type(value) in COLLECTION_CLASSES:
                for command in recreate_commands(key, value):
                    out.command(*command)
            else:
                out.stream(key, value)
            if when is not None:
                out.command(b"PEXPIREAT", key, when)
    out.flush()
    return out.written
