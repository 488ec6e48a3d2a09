"""A real sluice-server's whole state read out, and every way to save it and come back
(SAVE, BGSAVE, BGREWRITEAOF with either base, or none but the AOF, each followed by
kill -9 and a restart),
for tests that must find after the restart exactly what was there before.

    with saving_server("rewrite-resp-base") as srv:
        client = srv.client()
        ...
        before = read_out(client, NOT_KEPT["rewrite-resp-base"])
        save_kill_restart(srv)
        assert read_out(srv.client(), NOT_KEPT["rewrite-resp-base"]) == before
"""
from __future__ import annotations

import os
import signal
import time
from typing import Any

import redis

from engine.server.info import parse_info
from raw_io import raw_call as raw
from servers import SluiceServer

# name -> (server arguments, the command that saves). The snapshot paths run without an
# AOF, so the restart loads the snapshot; the rewrites under appendfsync always.
AOF = ["--appendonly", "yes", "--appendfsync", "always"]
SAVE_PATHS = {
    "save": (["--appendonly", "no"], "SAVE"),
    "bgsave": (["--appendonly", "no"], "BGSAVE"),
    "rewrite-snapshot-base": (AOF + ["--aof-use-rdb-preamble", "yes"], "BGREWRITEAOF"),
    "rewrite-resp-base": (AOF + ["--aof-use-rdb-preamble", "no"], "BGREWRITEAOF"),
    "aof-replay": (AOF, None),           # no save: the restart replays the AOF's effects
}
# What a save does not carry. A RESP base leaves out, as Redis's own rewrite does,
# node boundaries (its XADDs fill nodes to the node limits), consumers' seen and active
# times (the replay's clock sets them), and IDMP's lifetime counters (resp_base.py).
# Replaying an AOF's commands sets consumers' times to the replay's clock, as in Redis.
NODES = {b"radix-tree-keys", b"radix-tree-nodes"}
CONSUMER_TIMES = {b"seen-time", b"active-time"}
NOT_KEPT = {"save": set(), "bgsave": set(), "rewrite-snapshot-base": set(),
            "aof-replay": CONSUMER_TIMES,
            "rewrite-resp-base": NODES | CONSUMER_TIMES | {b"iids-added", b"iids-duplicates"}}
SETTLE_TIMEOUT_S = 30.0


class SavingServer(SluiceServer):
    """A sluice-server started with the arguments of one of SAVE_PATHS."""

    def __init__(self, path: str, extra: tuple = ()) -> None:
        super().__init__([*SAVE_PATHS[path][0], "--save", "", *extra])
        self.path = path

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10, protocol=2)


def _strip(reply: Any, names: set) -> Any:
    """reply with the (name, value) pairs of flat RESP2 maps whose name is in names
    dropped, at any depth."""
    if not isinstance(reply, list):
        return reply
    if len(reply) % 2 == 0 and any(isinstance(x, bytes) and x in names for x in reply[::2]):
        return [item for i in range(0, len(reply), 2) if reply[i] not in names
                for item in (reply[i], _strip(reply[i + 1], names))]
    return [_strip(x, names) for x in reply]


def key_state(client: redis.Redis, key: bytes, leave_out: set = frozenset()) -> tuple:
    """(type, absolute expiry, value read-out) of one key; leave_out: the names of
    stream fields (XINFO STREAM FULL, XINFO GROUPS) left out."""
    kind = raw(client, "TYPE", key)
    when = raw(client, "PEXPIRETIME", key)
    if kind == b"string":
        value = raw(client, "GET", key)
    elif kind == b"list":
        value = raw(client, "LRANGE", key, 0, -1)
    elif kind == b"hash":
        value = sorted(zip(*[iter(raw(client, "HGETALL", key))] * 2))
    elif kind == b"set":
        value = sorted(raw(client, "SMEMBERS", key))
    elif kind == b"zset":
        value = raw(client, "ZRANGE", key, 0, -1, "WITHSCORES")
    else:
        full = raw(client, "XINFO", "STREAM", key, "FULL")
        groups = raw(client, "XINFO", "GROUPS", key)
        pending = [raw(client, "XPENDING", key, g[1]) for g in groups]
        value = _strip([full, groups, pending], leave_out)
    return (kind, when, value)


def restored_alike(client: redis.Redis, key: bytes, payload: bytes) -> bool:
    """Whether payload, RESTOREd under another name, DUMPs as key does. A set or hash
    in a hash table lists its members in the table's order, which a new table may
    change, a small one loads as a listpack, and a set of integers that a removed
    member had made a listpack loads as an intset (in Redis too, from the 7.0 payload
    type): for those, the same members."""
    copy = b"restored:" + key
    raw(client, "RESTORE", copy, 0, payload, "REPLACE")
    try:
        encodings = (raw(client, "OBJECT", "ENCODING", key), raw(client, "OBJECT", "ENCODING", copy))
        if b"hashtable" in encodings or encodings == (b"listpack", b"intset"):
            return key_state(client, copy)[::2] == key_state(client, key)[::2]   # not TTLs
        return raw(client, "DUMP", copy) == raw(client, "DUMP", key)
    finally:
        raw(client, "DEL", copy)


def read_out(client: redis.Redis, leave_out: set = frozenset()) -> dict:
    """Every key of database 0 with its key_state."""
    keys = sorted(raw(client, "KEYS", "*"))
    return {key: key_state(client, key, leave_out) for key in keys}


def settle(client: redis.Redis) -> None:
    """Waits until no background save or rewrite runs (or is scheduled) and checks that
    the last ones succeeded."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while True:
        info = parse_info(raw(client, "INFO", "persistence"))
        busy = [f for f in ("rdb_bgsave_in_progress", "aof_rewrite_in_progress",
                            "aof_rewrite_scheduled") if info.get(f, "0") != "0"]
        if not busy:
            break
        assert time.monotonic() < deadline, info
        time.sleep(0.02)
    assert info.get("rdb_last_bgsave_status", "ok") == "ok", info
    assert info.get("aof_last_bgrewrite_status", "ok") == "ok", info


def save_kill_restart(server: SavingServer) -> None:
    """Saves by the server's path, kills it with SIGKILL once the save is done, and
    starts it again from its directory (failing with its log if it does not load)."""
    client = server.client()
    try:
        command = SAVE_PATHS[server.path][1]
        if command is not None:
            reply = raw(client, command)
            assert reply in (b"OK", b"Background saving started",
                             b"Background append only file rewriting started"), reply
        settle(client)
    finally:
        client.close()
    os.kill(server.proc.pid, signal.SIGKILL)
    server.stop()
    server.start()


def difference(before: Any, after: Any, where: str = "") -> str:
    """Where two read-outs first differ, and how (for a failure message)."""
    if type(before) is not type(after):
        return f"{where}: {before!r:.300} != {after!r:.300}"
    if isinstance(before, dict):
        for key in sorted(set(before) | set(after)):
            if before.get(key) != after.get(key):
                return difference(before.get(key), after.get(key), f"{where}/{key!r}")
    elif isinstance(before, (list, tuple)) and len(before) == len(after):
        for i, (x, y) in enumerate(zip(before, after)):
            if x != y:
                return difference(x, y, f"{where}/{i}")
    return f"{where}: {before!r:.300} != {after!r:.300}"
