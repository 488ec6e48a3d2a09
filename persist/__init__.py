"""Sluice persistence: the append-only command log (AOF), the snapshot, rewrite and
crash recovery. Fed only by the engine's effects (engine.Engine.add_effect_listener);
knows nothing of sockets, and of the engine only its storage (engine.core) and RESP
(engine.resp).

    snapshot_codec.pyx  engine state <-> records (C-level walk of streams and groups)
    snapshot.py         the snapshot file: lz4 frames of msgpack records, checksummed
    snapshot_blocks.py  a snapshot's block index, for readers that split a file
    resp_base.py        engine state as Redis 7.0 commands (a RESP AOF base)
    resp_log.pyx        RESP command encoding and the checked AOF reader
    manifest.py         Redis 7's appendonlydir manifest
    files.py            durable directory steps: fsync a directory, create one
    aof.py              the multi-part AOF: writer, fsync policies, rewrite
    recovery.py         loading a data directory on start
    directory_lock.py   one owner per data directory (server, Engine, writing tools)
    durability.py       one object tying them to an Engine (Engine(dir=...))

The names below are its public API: the server, the embedded Engine, tools/ and
sluice/ use these and no module of the package (tests/test_layers.py checks it).

Owning a data directory
    Durability          an Engine's persistence in a directory: loads it on start,
                        then logs the engine's effects, snapshots, rewrites; says how
                        far the AOF is fsynced (fsynced_seq, fsync_listeners: WAITAOF)
    DirectoryLock       the lock that makes a process a data directory's one owner
    DirectoryInUse      raised when another process owns it
    LOCK_NAME           the lock file's name (its presence marks a data directory)
    SNAPSHOT_FILENAME   the snapshot's default file name (the dbfilename default)
    fsync_dir           makes a directory's entries durable (after a rename in it)
Errors
    PersistError        any persistence failure with a message for the user
    CorruptFileError    a damaged file (path, offset of the last good byte, reason)
    TruncatedFileError  a file that ends inside a record (recoverable by cutting it)
    ForeignFileError    a file of another program (a Redis RDB file)
    refuse_rdb          raises ForeignFileError if a path holds a Redis RDB file
Snapshots
    is_snapshot, snapshot_info, verify_snapshot, iter_records, load_snapshot
                        recognise, describe, check, dump and load a snapshot file
    block_index, block_contents, Block, StreamEntries, PendingEntries
                        a snapshot split into independently readable blocks
AOF files
    Manifest            a multi-part AOF's manifest (its files in replay order)
    aof_base_file       the base file of a data directory's AOF
    AOF_BASE_FORMATS    what an AOF base may hold (for refuse_rdb's message)
    CommandReader       the strict reader of RESP commands in an AOF file
    LogBuffer           commands encoded as the AOF writes them (RESP arrays)
    replay_file         runs an AOF file's commands in an engine
    loading             the context in which an engine replays (nothing expires)

Each name is imported on first use, so that importing one module of the package (the
engine's commands import persist.errors) does not load the whole of it.
"""
from __future__ import annotations

from importlib import import_module

# public name -> (module, name there)
_HOMES = {
    "Durability": ("persist.durability", "Durability"),
    "DirectoryLock": ("persist.directory_lock", "DirectoryLock"),
    "DirectoryInUse": ("persist.directory_lock", "DirectoryInUse"),
    "LOCK_NAME": ("persist.directory_lock", "LOCK_NAME"),
    "SNAPSHOT_FILENAME": ("persist.snapshot", "DEFAULT_FILENAME"),
    "fsync_dir": ("persist.files", "fsync_dir"),
    "write_atomically": ("persist.files", "write_atomically"),
    "current_umask": ("persist.files", "current_umask"),
    "PersistError": ("persist.errors", "PersistError"),
    "CorruptFileError": ("persist.errors", "CorruptFileError"),
    "TruncatedFileError": ("persist.errors", "TruncatedFileError"),
    "ForeignFileError": ("persist.errors", "ForeignFileError"),
    "refuse_rdb": ("persist.redis_rdb", "refuse_rdb"),
    "is_snapshot": ("persist.snapshot", "is_snapshot"),
    "snapshot_info": ("persist.snapshot", "snapshot_info"),
    "verify_snapshot": ("persist.snapshot", "verify_snapshot"),
    "iter_records": ("persist.snapshot", "iter_records"),
    "load_snapshot": ("persist.snapshot", "load_snapshot"),
    "block_index": ("persist.snapshot_blocks", "snapshot_blocks"),
    "block_contents": ("persist.snapshot_blocks", "block_contents"),
    "Block": ("persist.snapshot_blocks", "Block"),
    "StreamEntries": ("persist.snapshot_blocks", "StreamEntries"),
    "PendingEntries": ("persist.snapshot_blocks", "PendingEntries"),
    "Manifest": ("persist.manifest", "Manifest"),
    "aof_base_file": ("persist.aof", "base_file"),
    "AOF_BASE_FORMATS": ("persist.recovery", "BASE_FORMATS"),
    "CommandReader": ("persist.resp_log", "CommandReader"),
    "LogBuffer": ("persist.resp_log", "LogBuffer"),
    "replay_file": ("persist.recovery", "replay_file"),
    "loading": ("persist.recovery", "loading"),
}

__all__ = list(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'persist' has no attribute {name!r}")
    value = getattr(import_module(home[0]), home[1])
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_HOMES))
