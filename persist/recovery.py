"""Loading a data directory on start: the AOF (manifest, base, incremental files) or,
without AOF, the snapshot.

Replay runs each logged command through the engine with every database in loading
mode (nothing expires while loading, as in Redis; keys whose time has passed go
afterwards). Commands between MULTI and EXEC run only once their EXEC is read. A
command cut off at the end of the last incremental file is the tail of a write that
a crash interrupted: with `aof-load-truncated yes` it is dropped and the file
truncated to the last whole command (a transaction without its EXEC goes with it);
damage anywhere else refuses to start, naming the file and offset.
"""
from __future__ import annotations

import logging
import mmap
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from engine.core.errors import ResponseError
from persist import snapshot
from persist.errors import CorruptFileError, TruncatedFileError
from persist.manifest import Manifest
from persist.redis_rdb import refuse_rdb
from persist.resp_log import CommandReader

log = logging.getLogger("sluice")

BASE_FORMATS = "a Sluice snapshot or RESP commands"      # what an AOF base may hold
FIX_HINT = "Run 'sluice-aof fix' on it to truncate the damaged tail (data after it is lost)"


@dataclass
class LoadReport:
    """What a load did (the tools and INFO report it)."""
    files: list = field(default_factory=list)       # (name, kind, bytes, commands)
    commands: int = 0
    failed: int = 0                                  # commands that replied an error
    truncated_at: Optional[tuple] = None             # (path, offset) of a dropped tail
    seconds: float = 0.0


def replay_commands(engine, data, path: str, *, base_offset: int = 0,
                    report: Optional[LoadReport] = None) -> int:
    """Replays the RESP commands in `data` (bytes-like). Returns the offset after the
    last command applied; raises TruncatedFileError / CorruptFileError (an unknown
    command counts as damage) after applying every complete command before it."""
    reader = CommandReader(data, path, base_offset)
    ctx = engine.new_context()
    ctx.logging = False
    ctx.tracking = False
    ctx.max_string = 2**63 - 1     # the log replays what was accepted (as Redis's AOF client)
    execute_in = engine.execute_in
    databases = engine.databases
    queued = None                  # commands of an open MULTI
    multi_at = 0                   # where that MULTI starts
    applied = base_offset
    count = failed = 0
    try:
        while True:
            start = reader.offset
            argv = reader.next()
            if argv is None:
                break
            name = argv[0].lower()
            if name == b"multi":
                queued, multi_at = [], start
                continue
            if name == b"exec" and queued is not None:
                for cmd in queued:
                    failed += _apply(execute_in, ctx, databases, cmd, path, start)
                count += len(queued)
                queued = None
                applied = reader.offset
                continue
            if queued is not None:
                queued.append(argv)
                continue
            failed += _apply(execute_in, ctx, databases, argv, path, start)
            count += 1
            applied = reader.offset
        if queued is not None:
            raise TruncatedFileError(path, multi_at, "transaction without its EXEC")
    except TruncatedFileError as exc:
        if queued is not None:
            exc.offset = multi_at
        raise
    finally:
        reader.close()
        if report is not None:
            report.commands += count
            report.failed += failed
    return applied


def _apply(execute_in, ctx, databases, argv: list, path: str, offset: int) -> int:
    """Runs one logged command; 1 if it replied an error (counted, as Redis does)."""
    if argv[0].lower() == b"select":
        try:
            ctx.db = databases[int(argv[1])]
        except (IndexError, ValueError):
            raise CorruptFileError(path, offset, "SELECT of a database that does not exist",
                                   FIX_HINT) from None
        return 0
    try:
        execute_in(ctx, argv)
    except ResponseError as err:
        if str(err).startswith("ERR unknown command"):
            raise CorruptFileError(path, offset, f"unknown command '{argv[0][:64].decode('latin-1')}'",
                                   FIX_HINT) from None
        return 1
    return 0


def replay_file(engine, path: str, report: Optional[LoadReport] = None) -> int:
    """Replays a whole RESP file (see replay_commands); returns the bytes applied."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            return 0
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return replay_commands(engine, data, path, report=report)


def load_aof(engine, aof, manifest: Manifest, *, load_truncated: bool = True,
             progress: Optional[Callable] = None) -> LoadReport:
    """Loads every file the manifest names, base first. See the module docstring."""
    report = LoadReport()
    started = time.monotonic()
    files = manifest.files()
    for i, f in enumerate(files):
        path = aof.path_of(f)
        if not os.path.exists(path):
            raise CorruptFileError(path, 0, "file named in the manifest is missing")
        size = os.path.getsize(path)
        before = report.commands
        with loading(engine):
            if f.kind == "b" and snapshot.is_snapshot(path):
                info = snapshot.load_snapshot(engine, path)
                report.files.append((f.name, "snapshot", size, info.get("keys", 0)))
                continue
            if f.kind == "b":
                refuse_rdb(path, BASE_FORMATS)
            try:
                replay_file(engine, path, report)
            except TruncatedFileError as exc:
                last = i == len(files) - 1 and f.kind == "i"
                if not (last and load_truncated):
                    exc.hint = FIX_HINT if last else (
                        "Only the last incremental file may end early")
                    raise CorruptFileError(path, exc.offset, exc.reason, exc.hint) from None
                log.warning("!!! Warning: short read while loading the AOF file %s!!!", f.name)
                log.warning("!!! Truncating the AOF %s at offset %d !!!", f.name, exc.offset)
                os.truncate(path, exc.offset)
                report.truncated_at = (path, exc.offset)
                log.warning("AOF %s loaded anyway because aof-load-truncated is enabled", f.name)
            except CorruptFileError as exc:
                if exc.hint:
                    raise
                raise CorruptFileError(path, exc.offset, exc.reason, FIX_HINT) from None
        report.files.append((f.name, "base" if f.kind == "b" else "incr", size,
                             report.commands - before))
        if progress is not None:
            progress(i + 1, len(files))
    report.seconds = time.monotonic() - started
    return report


class loading:
    """Every database in loading mode (no expiry) for the duration."""

    def __init__(self, engine) -> None:
        self.dbs = engine.databases

    def __enter__(self):
        for db in self.dbs:
            db.loading = True

    def __exit__(self, *exc):
        for db in self.dbs:
            db.loading = False


__all__ = ["LoadReport", "load_aof", "replay_file", "replay_commands", "loading", "FIX_HINT",
           "BASE_FORMATS"]
