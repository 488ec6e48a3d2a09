"""Recognising a Redis RDB file by its signature, so that one handed to Sluice (a
redis-server `dump.rdb`, or the RDB base of a Redis AOF written with
`aof-use-rdb-preamble yes`) is named for what it is rather than reported as damage.

Sluice does not read RDB: data comes over from Redis as its AOF written in RESP
commands, which Sluice loads (README, "Moving data from Redis"). An RDB file starts
with `REDIS` and the RDB version in four ASCII digits (redis-server 7.0 writes 0010).
"""
from __future__ import annotations

import os
import re
from typing import Optional

from persist.errors import ForeignFileError

SIGNATURE = re.compile(rb"REDIS([0-9]{4})")
SIGNATURE_BYTES = 9
MIGRATION_HINT = ("to move data from Redis, load an AOF that redis-server wrote with "
                  "aof-use-rdb-preamble no (README, \"Moving data from Redis\")")

__all__ = ["rdb_version", "rdb_error", "refuse_rdb"]


def rdb_version(head: bytes) -> Optional[int]:
    """The RDB version when `head` (a file's first bytes) is an RDB signature, else None."""
    match = SIGNATURE.match(head)
    return int(match.group(1)) if match else None


def rdb_error(path: str | os.PathLike, version: int, expected: str) -> ForeignFileError:
    """The error saying that `path` is an RDB file and not `expected`."""
    return ForeignFileError(path, f"{os.fspath(path)} is a Redis RDB file (RDB version "
                                  f"{version}), not {expected}; Sluice does not read RDB: "
                                  f"{MIGRATION_HINT}")


def refuse_rdb(path: str | os.PathLike, expected: str) -> None:
    """Raises ForeignFileError when the file at `path` is a Redis RDB file; a missing
    or unreadable file is left to the caller's own reading."""
    try:
        with open(path, "rb") as f:
            head = f.read(SIGNATURE_BYTES)
    except OSError:
        return
    version = rdb_version(head)
    if version is not None:
        raise rdb_error(path, version, expected)
