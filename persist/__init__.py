"""Sluice persistence: the append-only command log (AOF), the snapshot, rewrite and
crash recovery. Fed only by the engine's effects (engine.Engine.add_effect_listener);
knows nothing of sockets.

    snapshot_codec.pyx  engine state <-> records (C-level walk of streams and groups)
    snapshot.py         the snapshot file: lz4 frames of msgpack records, checksummed
    resp_base.py        engine state as Redis 7.0 commands (a RESP AOF base)
    resp_log.pyx        RESP command encoding and the checked AOF reader
    manifest.py         Redis 7's appendonlydir manifest
    files.py            durable directory steps: fsync a directory, create one
    aof.py              the multi-part AOF: writer, fsync policies, rewrite
    recovery.py         loading a data directory on start
    directory_lock.py   one owner per data directory (server, Engine, writing tools)
    durability.py       one object tying them to an Engine (Engine(dir=...))
"""
