"""The RESP AOF base: replayed into a fresh Sluice engine and into redis-server 7.0,
it gives back the state it was written from (consumers' seen/active times aside,
which Redis's own rewrite does not carry either)."""
from __future__ import annotations

import io
import shutil
import subprocess
import time

import hiredis
import pytest

from engine import Engine, ManualClock
from engine_states import as_dict, observe, random_engine, stream_view
from persist.resp_base import write_resp_base
from persist.snapshot_codec import RespWriter


def resp_of(engine: Engine) -> bytes:
    out = io.BytesIO()
    written = write_resp_base(engine, out)
    assert written == len(out.getvalue())
    return out.getvalue()


def by_key(cmds: list[list[bytes]]) -> dict[bytes, list[list[bytes]]]:
    """Each key's commands in their order (keys come in the keyspace's table order,
    as in Redis's rewrite)."""
    out: dict[bytes, list[list[bytes]]] = {}
    for cmd in cmds:
        out.setdefault(cmd[1], []).append(cmd)
    return out


def commands(data: bytes) -> list[list[bytes]]:
    reader = hiredis.Reader()
    reader.feed(data)
    out = []
    while (cmd := reader.gets()) is not False:
        out.append(cmd)
    return out


def replay(data: bytes, now_ms: int) -> Engine:
    engine = Engine(clock=ManualClock(now_ms))
    for cmd in commands(data):
        if cmd[0] == b"SELECT":
            engine.select(int(cmd[1]))
        else:
            engine.execute(*cmd)
    engine.select(0)
    return engine


@pytest.mark.parametrize("seed", range(25))
def test_sluice_replays_the_base_into_the_same_state(seed):
    source = random_engine(seed, 500)
    replayed = replay(resp_of(source), source.clock.now_ms())
    assert observe(replayed, consumer_times=False) == observe(source, consumer_times=False)


def test_stream_commands_follow_redis_rewrite():
    engine = Engine(clock=ManualClock(1_700_000_000_000))
    x = engine.execute
    x("XADD", "s", "1-1", "f", "v")
    x("XADD", "s", "2-1", "f", "w", "g", "h")
    x("XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "0")
    x("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", ">")
    x("XGROUP", "CREATECONSUMER", "s", "g", "bob")
    x("XGROUP", "CREATE", "s", "unknown", "1-1")
    x("XADD", "empty", "MAXLEN", "0", "9-9", "a", "b")
    x("SET", "str", "val", "PXAT", 1_800_000_000_000)
    x("PEXPIREAT", "s", 1_900_000_000_000)
    cmds = commands(resp_of(engine))
    assert cmds[0] == [b"SELECT", b"0"]
    assert by_key(cmds[1:]) == by_key([
        [b"XADD", b"s", b"1-1", b"f", b"v"],
        [b"XADD", b"s", b"2-1", b"f", b"w", b"g", b"h"],
        [b"XSETID", b"s", b"2-1", b"ENTRIESADDED", b"2", b"MAXDELETEDID", b"0-0"],
        [b"XGROUP", b"CREATE", b"s", b"g", b"1-1", b"ENTRIESREAD", b"1"],
        [b"XCLAIM", b"s", b"g", b"alice", b"0", b"1-1", b"TIME", b"1700000000000",
         b"RETRYCOUNT", b"1", b"JUSTID", b"FORCE"],
        [b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"bob"],
        [b"XGROUP", b"CREATE", b"s", b"unknown", b"1-1"],
        [b"PEXPIREAT", b"s", b"1900000000000"],
        [b"XADD", b"empty", b"MAXLEN", b"0", b"0-1", b"x", b"y"],
        [b"XSETID", b"empty", b"9-9", b"ENTRIESADDED", b"1", b"MAXDELETEDID", b"0-0"],
        [b"SET", b"str", b"val", b"PXAT", b"1800000000000"],
    ])


def test_pending_entries_whose_entry_is_gone_are_kept():
    """XCLAIM skips missing entries, so placeholders carry those PEL entries: trimmed
    ones go by XTRIM (max-deleted-ID stays 0-0), deleted ones by XDEL."""
    engine = Engine(clock=ManualClock(1_700_000_000_000))
    x = engine.execute
    for i in range(1, 7):
        x("XADD", "s", f"{i}-0", "f", "v")
    x("XGROUP", "CREATE", "s", "g", "0")
    x("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    x("XTRIM", "s", "MAXLEN", "=", 4)
    data = resp_of(engine)
    assert [b"XTRIM", b"s", b"MINID", b"3-0"] in commands(data)
    assert observe(replay(data, 1_700_000_000_000), consumer_times=False) == \
        observe(engine, consumer_times=False)
    x("XDEL", "s", "4-0", "6-0")
    data = resp_of(engine)
    assert [b"XDEL", b"s", b"4-0", b"6-0"] in commands(data)
    assert observe(replay(data, 1_700_000_000_000), consumer_times=False) == \
        observe(engine, consumer_times=False)


def test_writer_encodes_arguments():
    out = io.BytesIO()
    writer = RespWriter(out)
    writer.command(b"SET", "k\u00e9", -12, 18446744073709551615)
    writer.flush()
    assert out.getvalue() == (b"*4\r\n$3\r\nSET\r\n$3\r\nk\xc3\xa9\r\n$3\r\n-12\r\n"
                              b"$20\r\n18446744073709551615\r\n")
    assert writer.written == len(out.getvalue())


# -- redis-server 7.0 ---------------------------------------------------------------------

MARGIN_MS = 120_000     # keys expiring this close to "now" may differ by replay time


def feed_redis(port: int, data: bytes) -> None:
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip(reason="redis-cli is not installed")
    done = subprocess.run([cli, "-p", str(port), "--pipe"], input=data, capture_output=True,
                          timeout=60, check=True)
    assert b"errors: 0," in done.stdout, done.stdout + done.stderr


def redis_view(oracle, key: bytes) -> dict:
    full = as_dict(oracle.execute(b"XINFO", b"STREAM", key, b"FULL", b"COUNT", 0))
    return normalize(full)


def normalize(full: dict) -> dict:
    """XINFO STREAM FULL with what 7.0 and Sluice share and must agree on: no node
    layout, no consumer times (not carried), no lag (computed by newer rules in
    Sluice), no IDMP fields (Redis 8.6)."""
    full = dict(full)
    for name in (b"radix-tree-keys", b"radix-tree-nodes", b"idmp-duration", b"idmp-maxsize",
                 b"pids-tracked", b"iids-tracked", b"iids-added", b"iids-duplicates"):
        full.pop(name, None)
    groups = []
    for g in full[b"groups"]:
        g = as_dict(g) if isinstance(g, list) else dict(g)
        g.pop(b"lag", None)
        g[b"consumers"] = [
            {k: v for k, v in (as_dict(c) if isinstance(c, list) else c).items()
             if k not in (b"seen-time", b"active-time")}
            for c in g[b"consumers"]]
        groups.append(g)
    full[b"groups"] = groups
    return full


@pytest.mark.parametrize("seed", range(8))
def test_redis_server_replays_the_base_into_the_same_state(seed, oracle, redis_server):
    now = int(time.time() * 1000)
    source = random_engine(seed, 500, t0=now - 3_600_000)
    feed_redis(redis_server[1], resp_of(source))
    source.clock.set(now)
    expected = observe(source, consumer_times=False)
    stable = {k: v for k, v in expected.items() if v[1] is None or v[1] > now + MARGIN_MS}
    assert any(v[0] == "stream" and v[2][b"groups"] for v in stable.values())
    for (db, key), value in stable.items():
        oracle.execute(b"SELECT", db)
        if value[0] == "string":
            assert oracle.execute(b"GET", key) == value[2]
            assert oracle.execute(b"PEXPIRETIME", key) == (-1 if value[1] is None else value[1])
            continue
        source.select(db)
        assert redis_view(oracle, key) == normalize(stream_view(source, key)), (db, key)
        assert oracle.execute(b"PEXPIRETIME", key) == (-1 if value[1] is None else value[1])
        for group in value[2][b"groups"]:
            ours = source.execute(b"XPENDING", key, group[b"name"], b"-", b"+", 10**6)
            theirs = oracle.execute(b"XPENDING", key, group[b"name"], b"-", b"+", 10**6)
            assert [(p[0], p[1], p[3]) for p in theirs] == [(p[0], p[1], p[3]) for p in ours]
    source.select(0)
    for db in (0, 1, 5):
        oracle.execute(b"SELECT", db)
        keys = {k for (d, k), v in expected.items() if d == db}
        theirs = set(oracle.execute(b"KEYS", b"*"))
        assert {k for (d, k) in stable if d == db} <= theirs <= keys
