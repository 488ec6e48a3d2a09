"""States at the limits of what commands accept survive every way of saving: SAVE,
BGSAVE, BGREWRITEAOF with a snapshot base and with a RESP base, the AOF alone, each
followed by kill -9 and a restart of a real sluice-server, and DUMP + RESTORE. Counters
at their limits behave as Redis's do (checked against redis-server). The property test
runs seeded random command sequences at the limits (SLUICE_FUZZ_SCALE=10 runs ten
times as many)."""
from __future__ import annotations

import os
import random
import zlib

import pytest
import redis

from saved_states import (NOT_KEPT, SAVE_PATHS, SavingServer, difference, raw, read_out,
                          restored_alike, save_kill_restart)
from servers import ORACLE_FLAGS, RedisServer

INT64_MAX = 2**63 - 1
INT64_MIN = -2**63

WRAPPING_COUNTERS = [
    ("XADD", "s", "1-1", "f", "v"),
    ("XSETID", "s", "1-1", "ENTRIESADDED", INT64_MAX, "MAXDELETEDID", "0-0"),
    ("XGROUP", "CREATE", "s", "g", "0-0", "ENTRIESREAD", INT64_MAX - 1),
    ("XADD", "s", "2-1", "f", "v"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", 5, "STREAMS", "s", ">"),
]


def counters(client) -> tuple:
    info = raw(client, "XINFO", "STREAM", "s")
    group = raw(client, "XINFO", "GROUPS", "s")[0]
    return (info[info.index(b"entries-added") + 1], group[group.index(b"entries-read") + 1],
            group[group.index(b"lag") + 1])


def test_wrapped_counters_are_redis_s(tmp_path):
    with RedisServer(ORACLE_FLAGS, workdir=tmp_path) as oracle:
        client = oracle.client(protocol=2)
        for command in WRAPPING_COUNTERS:
            raw(client, *command)
        expected = counters(client)
    assert expected[:2] == (INT64_MIN, INT64_MIN)
    with SavingServer("save") as srv:
        client = srv.client()
        for command in WRAPPING_COUNTERS:
            raw(client, *command)
        assert counters(client) == expected


@pytest.mark.parametrize("path", SAVE_PATHS)
def test_wrapped_counters_survive_saving(path):
    with SavingServer(path) as srv:
        client = srv.client()
        for command in WRAPPING_COUNTERS:
            raw(client, *command)
        before = read_out(client, NOT_KEPT[path])
        save_kill_restart(srv)
        client = srv.client()
        assert read_out(client, NOT_KEPT[path]) == before
        raw(client, "RESTORE", "copy", 0, raw(client, "DUMP", "s"))
        assert raw(client, "DUMP", "copy") == raw(client, "DUMP", "s")
        assert counters(client)[:2] == (INT64_MIN, INT64_MIN)


def radix_tree_keys(client, key: str) -> int:
    info = raw(client, "XINFO", "STREAM", key)
    return info[info.index(b"radix-tree-keys") + 1]


@pytest.mark.parametrize("path", SAVE_PATHS)
def test_node_boundaries_survive_saving(path, tmp_path):
    """A stream from redis-server whose nodes were cut under another
    stream-node-max-entries and then thinned by XDEL keeps its nodes through DUMP +
    RESTORE and every save but a RESP base, whose XADDs fill nodes to the node limits
    (redis-server's own RESP rewrite does the same)."""
    with RedisServer(ORACLE_FLAGS + ("--stream-node-max-entries", "7"),
                     workdir=tmp_path) as oracle:
        client = oracle.client(protocol=2)
        for i in range(1, 60):
            raw(client, "XADD", "s", f"{i}-1", "f", i)
        raw(client, "CONFIG", "SET", "stream-node-max-entries", 100)
        for i in range(60, 80):
            raw(client, "XADD", "s", f"{i}-1", "f", i)
        raw(client, "XDEL", "s", *[f"{i}-1" for i in range(1, 30, 2)])
        payload, nodes = raw(client, "DUMP", "s"), radix_tree_keys(client, "s")
    assert nodes == 9
    with SavingServer(path) as srv:
        client = srv.client()
        raw(client, "RESTORE", "s", 0, payload)
        raw(client, "RESTORE", "copy", 0, raw(client, "DUMP", "s"))
        assert radix_tree_keys(client, "s") == radix_tree_keys(client, "copy") == nodes
        save_kill_restart(srv)
        client = srv.client()
        assert radix_tree_keys(client, "s") == (1 if path == "rewrite-resp-base" else nodes)


@pytest.mark.parametrize("path", SAVE_PATHS)
def test_a_node_left_with_only_tombstones_survives_saving(path, tmp_path):
    """An exact MINID trim can leave the head node with tombstones only (Redis keeps
    it). Every save but a RESP base keeps that node, and the stream then goes on as
    redis-server's does: the next trim and XADDs give the same XINFO."""
    def build(client):
        for ms in (1, 2):
            for seq in range(1, 5):
                raw(client, "XADD", "s", f"{ms}-{seq}", "f", "v")
        raw(client, "XADD", "s", "3-1", "f", "v")
        raw(client, "XDEL", "s", "1-4")
        assert raw(client, "XTRIM", "s", "MINID", "=", "1-4") == 3

    def go_on(client):
        raw(client, "XTRIM", "s", "MINID", "=", "2-2")
        raw(client, "XADD", "s", "4-1", "f", "v")
        info = raw(client, "XINFO", "STREAM", "s")
        return {name: info[info.index(name) + 1] for name in (
            b"length", b"radix-tree-keys", b"last-generated-id", b"max-deleted-entry-id",
            b"entries-added", b"recorded-first-entry-id", b"first-entry", b"last-entry")}

    with RedisServer(ORACLE_FLAGS + ("--stream-node-max-entries", "4"),
                     workdir=tmp_path) as oracle:
        client = oracle.client(protocol=2)
        build(client)
        nodes = radix_tree_keys(client, "s")
        expected = go_on(client)
    assert nodes == 3
    with SavingServer(path, ("--stream-node-max-entries", "4")) as srv:
        client = srv.client()
        build(client)
        assert radix_tree_keys(client, "s") == nodes
        save_kill_restart(srv)
        client = srv.client()
        if path == "rewrite-resp-base":
            assert radix_tree_keys(client, "s") == 2
        else:
            assert radix_tree_keys(client, "s") == nodes
            assert go_on(client) == expected


# --- the property: random commands at the limits, then save, kill -9, restart -----------

U64_MAX = 2**64 - 1
SCALE = max(1, int(os.environ.get("SLUICE_FUZZ_SCALE", "1")))
ROUNDS = 3 * SCALE              # command sequences per way of saving
COMMANDS_PER_ROUND = 60
FAR = 2**62                     # an expiry far away (Redis takes up to ~2^63 ms)
STREAMS = ("s1", "s2")
GROUPS = ("g1", "g2")
CONSUMERS = ("c1", "c2")


class ExtremeCommands:
    """A seeded source of commands whose arguments sit at the limits Redis accepts
    (and a little past them: refused commands must change nothing)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ids: dict = {}             # stream -> IDs it returned (see run_commands)

    def pick(self, *options):
        return self.rng.choice(options)

    def count(self) -> int:
        return self.pick(0, 1, 2, 5, INT64_MAX - 1, INT64_MAX, INT64_MAX + 1)

    def stream_id(self) -> str:
        ms = self.pick(0, 1, 2, 7, INT64_MAX, U64_MAX - 1, U64_MAX)
        seq = self.pick(0, 1, 2, INT64_MAX, U64_MAX - 1, U64_MAX)
        return self.pick(f"{ms}-{seq}", f"{ms}-{seq}", f"{ms}", "0-1", "0-0", "-", "+")

    def new_id(self) -> str:
        return self.pick("*", "*", "0-1", "1-*", f"{U64_MAX}-*", f"{U64_MAX}-{U64_MAX}",
                         f"{INT64_MAX}-{U64_MAX}", self.stream_id())

    def value(self) -> bytes:
        return self.pick(b"", b"v", b"0", b"-1", str(INT64_MAX).encode(), b"x" * 5000,
                         bytes(range(256)), b"1.5", b"inf")

    def stream_command(self) -> tuple:
        s, g, c = self.pick(*STREAMS), self.pick(*GROUPS), self.pick(*CONSUMERS)
        options = [
            ("XADD", s, self.new_id(), "f", self.value()),
            ("XADD", s, self.new_id(), "f", self.value(), "g", self.value()),
            ("XADD", s, "MAXLEN", self.pick("=", "~"), self.pick(0, 1, 3), self.new_id(), "f", "v"),
            ("XADD", s, "MINID", self.stream_id(), "*", "f", "v"),
            ("XADD", s, "IDMP", self.pick("p", ""), self.value(), "*", "f", "v"),
            ("XCFGSET", s, "IDMP-DURATION", self.pick(1, 100, 86400), "IDMP-MAXSIZE",
             self.pick(1, 100, 10000)),
            ("XDEL", s, self.stream_id()),
            ("XTRIM", s, self.pick("MAXLEN", "MINID"), self.pick("=", "~"),
             self.pick(0, 1, 2, self.stream_id())),
            ("XSETID", s, self.stream_id()),
            ("XSETID", s, self.stream_id(), "ENTRIESADDED", self.count(),
             "MAXDELETEDID", self.stream_id()),
            ("XGROUP", "CREATE", s, g, self.pick("$", "0", self.stream_id()), "MKSTREAM",
             "ENTRIESREAD", self.pick(-1, *[self.count()] * 3)),
            ("XGROUP", "SETID", s, g, self.pick("$", "0", self.stream_id()),
             "ENTRIESREAD", self.pick(-1, self.count())),
            ("XGROUP", "CREATECONSUMER", s, g, c),
            ("XGROUP", "DELCONSUMER", s, g, c),
            ("XGROUP", "DESTROY", s, g),
            ("XREADGROUP", "GROUP", g, c, "COUNT", self.pick(1, 3, 100), "STREAMS", s, ">"),
            ("XREADGROUP", "GROUP", g, c, "COUNT", 3, "STREAMS", s, self.pick("0", ">")),
            ("XREADGROUP", "GROUP", g, c, "COUNT", 3, "CLAIM", self.pick(0, 1, INT64_MAX),
             "STREAMS", s, ">"),
            ("XACK", s, g, self.stream_id()),
            ("XCLAIM", s, g, c, self.pick(0, INT64_MAX), self.stream_id(),
             "TIME", self.pick(0, 1, INT64_MAX, -1), "RETRYCOUNT", self.count(),
             *self.pick((), ("FORCE",), ("JUSTID",), ("FORCE", "JUSTID"))),
            ("XCLAIM", s, g, c, 0, self.stream_id(), "IDLE", self.pick(0, INT64_MAX)),
            ("XAUTOCLAIM", s, g, c, self.pick(0, INT64_MAX), "0-0", "COUNT",
             self.pick(1, 100)),
            ("XNACK", s, g, self.pick("SILENT", "FAIL", "FATAL"), "IDS", 1, self.stream_id()),
            ("XNACK", s, g, "SILENT", "IDS", 1, self.stream_id(), "RETRYCOUNT", self.count()),
            ("XGROUP", "CREATE", s, g, "0", "MKSTREAM"),
            ("XADD", s, "*", "f", self.value()),
            ("XREADGROUP", "GROUP", g, c, "COUNT", 2, "STREAMS", s, ">"),
            ("XCLAIM", s, g, c, 0, self.known_id(s), "TIME", self.pick(0, 1, INT64_MAX),
             "RETRYCOUNT", self.count(), "FORCE"),
            ("XNACK", s, g, "SILENT", "IDS", 1, self.known_id(s), "RETRYCOUNT", self.count()),
            ("XDEL", s, self.known_id(s)),
            ("XSETID", s, self.known_id(s), "ENTRIESADDED", self.count(), "MAXDELETEDID", "0-0"),
        ]
        # the commands that build state (groups, entries, deliveries) come more often
        weights = [1] * (len(options) - 7) + [4, 6, 6, 3, 2, 2, 2]
        return self.rng.choices(options, weights)[0]

    def known_id(self, stream: str) -> str:
        """An ID the stream had (reads fill self.ids), else any."""
        ids = self.ids.get(stream)
        return self.rng.choice(ids) if ids else self.stream_id()

    def other_command(self) -> tuple:
        key = self.pick("str", "list", "hash", "set", "zset", *STREAMS)
        when = self.pick(FAR, INT64_MAX // 2, 4102444800000)
        options = [
            ("SET", "str", self.value()),
            ("SET", "str", self.value(), "PXAT", when),
            ("APPEND", "str", self.value()),
            ("RPUSH", "list", self.value(), self.value()),
            ("LPOP", "list", self.pick(1, 5)),
            ("HSET", "hash", self.value(), self.value()),
            ("HDEL", "hash", self.value()),
            ("SADD", "set", self.value(), self.pick(b"1", b"-9223372036854775808", b"7")),
            ("SREM", "set", self.value()),
            ("ZADD", "zset", self.pick("inf", "-inf", "0", "-0", "1e308", "-1e-308", "nan"),
             self.value()),
            ("ZINCRBY", "zset", self.pick("inf", "-inf", "1"), self.value()),
            ("ZREM", "zset", self.value()),
            ("PEXPIREAT", key, when),
            ("PERSIST", key),
            ("RESTORE", key + "-copy", 0, None),        # filled in with the key's DUMP
        ]
        return self.pick(*options)

    def command(self) -> tuple:
        return self.stream_command() if self.rng.random() < 0.7 else self.other_command()


def run_commands(client, source: ExtremeCommands, n: int) -> None:
    for _ in range(n):
        command = source.command()
        if command[0] == "RESTORE":
            payload = raw(client, "DUMP", command[1][:-len("-copy")])
            if payload is None:
                continue
            command = (*command[:3], payload, "REPLACE")
        try:
            reply = raw(client, *command)
        except redis.ResponseError:
            continue                # refused: it must have changed nothing
        if command[0] == "XADD" and isinstance(reply, bytes):
            source.ids.setdefault(command[1], []).append(reply.decode())


def check_dump_restore(client) -> None:
    """Every key's DUMP restores (under another name) to the same value."""
    for key in raw(client, "KEYS", "*"):
        assert restored_alike(client, key, raw(client, "DUMP", key)), key


@pytest.mark.parametrize("path", SAVE_PATHS)
def test_extreme_command_sequences_survive_saving(path):
    leave_out = NOT_KEPT[path]
    with SavingServer(path) as srv:
        for round_ in range(ROUNDS):
            seed = zlib.crc32(f"{path} {round_}".encode())
            client = srv.client()
            raw(client, "FLUSHALL")
            run_commands(client, ExtremeCommands(seed), COMMANDS_PER_ROUND)
            check_dump_restore(client)
            before = read_out(client, leave_out)
            save_kill_restart(srv)
            after = read_out(srv.client(), leave_out)
            assert after == before, f"seed {seed}: {difference(before, after)}"
