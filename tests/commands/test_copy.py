"""COPY (engine/commands/key_copy.pyx): strings and streams, with TTL, DB and
REPLACE, against redis-server 7.0 (into another database: its WATCHes and keyspace
events); a stream's copy is deep (engine/core/groups.pyx
copy_stream, radix.pyx radix_clone): XINFO STREAM FULL of the copy equals the
source's, and changing either leaves the other as it was. Effects replay to the same
state, and COPY survives AOF replay, rewrite and restart."""
from __future__ import annotations

import random
import time

import pytest
import redis

from engine import Engine, ManualClock, ResponseError
from engine.api.session import Hub, Session
from engine.commands.dispatch import dispatch
from engine.core.value_types import VALUE_TYPES

from differential import run_both
from engine_states import contents, effect_log, expiries, replay
from test_command_table import server_in_thread
from test_keys_strings import cmds

T0 = 1_700_000_000_000

COPY_SEQUENCE = cmds("""
    SET a hello
    COPY a b
    GET b
    COPY a b
    COPY a b REPLACE
    COPY a a
    COPY a a DB 0
    COPY a a DB 1
    SELECT 1
    GET a
    SELECT 0
    COPY missing b
    COPY missing b REPLACE
    COPY a c DB 16
    COPY a c DB -1
    COPY a c DB x
    COPY a c DB 2147483648
    COPY a c DB
    COPY a c foo
    COPY a c REPLACE REPLACE
    COPY a c replace db 3
    SELECT 3
    GET c
    SELECT 0
    SET t v PXAT 99999999999999
    COPY t t2
    PEXPIRETIME t2
    COPY t t3 DB 2
    SELECT 2
    PEXPIRETIME t3
    SELECT 0
    SET b other
    COPY a b
    GET b
    SET plain x
    COPY plain t2 REPLACE
    PEXPIRETIME t2
    XADD s 1-1 f v
    COPY s a
    COPY s a REPLACE
    TYPE a
    XRANGE a - +
    COPY a s2 DB 4
    SELECT 4
    XRANGE s2 - +
    SELECT 0
    COPY
    COPY a
""")


def test_copy_options_and_errors(engine, oracle):
    run_both(engine, oracle, COPY_SEQUENCE, label="COPY")


def stream_workload(call, rng: random.Random, steps: int) -> None:
    """Stream commands with explicit IDs (both sides produce the same state)."""
    for key in ("s1", "s2"):
        call("XGROUP", "CREATE", key, "g1", "0", "MKSTREAM")
        call("XGROUP", "CREATE", key, "g2", "$")
    seq = 0
    for _ in range(steps):
        key = rng.choice(["s1", "s2"])
        group = rng.choice(["g1", "g2"])
        consumer = rng.choice(["alice", "bob", "carol"])
        op = rng.random()
        if op < 0.5:
            seq += 1
            call("XADD", key, f"{seq}-{rng.randint(0, 3)}", "f", str(seq), *(
                ["g", "x" * rng.randint(0, 40)] if rng.random() < 0.3 else []))
        elif op < 0.7:
            call("XREADGROUP", "GROUP", group, consumer, "COUNT", rng.randint(1, 5),
                 "STREAMS", key, ">")
        elif op < 0.8:
            pending = call("XPENDING", key, group, "-", "+", 5)
            if pending:
                call("XACK", key, group, *[p[0] for p in pending[:2]])
        elif op < 0.87:
            pending = call("XPENDING", key, group, "-", "+", 3)
            if pending:
                call("XCLAIM", key, group, consumer, 0, *[p[0] for p in pending])
        elif op < 0.93:
            entries = call("XRANGE", key, "-", "+", "COUNT", 5)
            if entries:
                call("XDEL", key, rng.choice(entries)[0])
        elif op < 0.96:
            call("XGROUP", "DELCONSUMER", key, group, consumer)
        else:
            call("XGROUP", "CREATECONSUMER", key, group, consumer + "2")


def full(call, key):
    return call("XINFO", "STREAM", key, "FULL", "COUNT", "0")


def test_stream_copy_matches_redis(engine, oracle):
    for side in (engine, oracle):
        stream_workload(side.execute, random.Random(7), 600)
    run_both(engine, oracle, [
        ("COPY", "s1", "c1"), ("COPY", "s2", "c2", "DB", "3"), ("XLEN", "c1"),
        ("XINFO", "STREAM", "c1", "FULL", "COUNT", "0"),
        ("XPENDING", "c1", "g1"), ("XPENDING", "c1", "g2", "-", "+", "1000"),
        ("XINFO", "GROUPS", "c1"), ("XINFO", "CONSUMERS", "c1", "g1"),
        ("SELECT", "3"), ("XINFO", "STREAM", "c2", "FULL", "COUNT", "0"),
        ("XPENDING", "c2", "g1", "-", "+", "1000"), ("SELECT", "0"),
        ("XADD", "c1", "99999-1", "f", "v"), ("XREADGROUP", "GROUP", "g1", "alice",
                                                "STREAMS", "c1", ">"),
        ("XINFO", "GROUPS", "c1"), ("XINFO", "GROUPS", "s1"), ("XLEN", "s1"),
    ], label="COPY stream")


def test_stream_copy_equals_source_and_is_independent():
    clock = ManualClock(T0)
    eng = Engine(clock)

    def call(*args):
        clock.advance(1)
        return eng.execute(*args)

    stream_workload(call, random.Random(3), 3000)
    before = full(eng.execute, "s1")
    assert eng.execute("COPY", "s1", "c") == 1
    assert full(eng.execute, "c") == before
    # Change the copy in every way: the source stays as it was.
    call("XADD", "c", "*", "f", "v")
    call("XREADGROUP", "GROUP", "g1", "alice", "STREAMS", "c", "0")
    call("XAUTOCLAIM", "c", "g1", "zed", "0", "0", "COUNT", "50")
    call("XTRIM", "c", "MAXLEN", "10")
    call("XGROUP", "DESTROY", "c", "g2")
    call("XGROUP", "SETID", "c", "g1", "$")
    assert full(eng.execute, "s1") == before
    # ... and the other way round.
    copy_view = full(eng.execute, "c")
    call("DEL", "s1")
    assert full(eng.execute, "c") == copy_view


def test_large_stream_copy_is_fast():
    eng = Engine(ManualClock(T0))
    fields = [b"field", b"x" * 20]
    for i in range(1, 200_001):
        eng.execute("XADD", "big", f"{i}-0", *fields)
    eng.execute("XGROUP", "CREATE", "big", "g", "0")
    eng.execute("XREADGROUP", "GROUP", "g", "c", "COUNT", "100000", "STREAMS", "big", ">")
    start = time.perf_counter()
    eng.execute("COPY", "big", "copy")
    elapsed = time.perf_counter() - start
    assert eng.execute("XLEN", "copy") == 200_000
    assert eng.execute("XPENDING", "copy", "g")[0] == 100_000
    assert elapsed < 0.5, elapsed     # node and bucket memcpy, no per-entry work


def test_events_and_effects_replay():
    clock = ManualClock(T0)
    eng = Engine(clock)
    log = effect_log(eng)
    eng.execute("SET", "a", "1", "PXAT", str(T0 + 5000))
    eng.execute("XADD", "s", "1-1", "f", "v")
    eng.execute("XGROUP", "CREATE", "s", "g", "0")
    eng.execute("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    ctx = eng.new_context()
    ctx.tracking = ctx.logging = True
    dispatch(ctx, [b"COPY", b"a", b"b"])
    assert ctx.events == [("g", b"copy_to", b"b")] and ctx.touched == [b"b"]
    log.append((0, ctx.effects[0]))
    eng.execute("COPY", "s", "s2", "DB", "2")
    eng.execute("COPY", "a", "b")                 # refused: nothing logged
    eng.execute("SET", "x", "1", "PXAT", str(T0 + 10))
    eng.select(2)
    eng.execute("SET", "gone", "old", "PXAT", str(T0 + 10))
    eng.select(0)
    clock.advance(100)
    eng.execute("COPY", "a", "gone", "DB", "2")   # the expired destination is overwritten
    copies = [e for _, e in log if e[0] == b"COPY"]
    assert copies == [[b"COPY", b"a", b"b", b"REPLACE"],
                      [b"COPY", b"s", b"s2", b"DB", b"2", b"REPLACE"],
                      [b"COPY", b"a", b"gone", b"DB", b"2", b"REPLACE"]]
    # (the replica's clock is the primary's: XREADGROUP's effects carry its times)
    replica = replay(log, ManualClock(T0))
    for ours, theirs in zip(eng.databases, replica.databases):
        assert expiries(ours) == expiries(theirs)
        assert {k: v for k, v in contents(ours).items() if type(v) is bytes} == \
               {k: v for k, v in contents(theirs).items() if type(v) is bytes}
    replica.select(2)
    eng.select(2)
    assert full(replica.execute, "s2") == full(eng.execute, "s2")


def test_copy_survives_aof_replay_rewrite_and_restart(tmp_path):
    eng = Engine(dir=str(tmp_path), appendonly=True, appendfsync="no")
    stream_workload(eng.execute, random.Random(5), 300)
    eng.execute("SET", "k", "v", "PXAT", "99999999999999")
    eng.execute("COPY", "s1", "c1")
    eng.execute("COPY", "k", "k2", "DB", "1")
    eng.execute("BGREWRITEAOF")
    eng.execute("COPY", "s2", "c2")
    eng.execute("COPY", "s1", "c2", "REPLACE")
    expected = [full(eng.execute, key) for key in ("s1", "c1", "c2")]
    eng.close(save=False)
    again = Engine(dir=str(tmp_path), appendonly=True)
    try:
        assert [full(again.execute, key) for key in ("s1", "c1", "c2")] == expected
        assert expected[1] == expected[0] and expected[2] == expected[0]
        again.select(1)
        assert again.execute("GET", "k2") == b"v"
        assert again.execute("PEXPIRETIME", "k2") == 99999999999999
    finally:
        again.close(save=False)


def test_copied_stream_survives_a_snapshot(tmp_path):
    eng = Engine(dir=str(tmp_path))
    stream_workload(eng.execute, random.Random(6), 400)
    eng.execute("COPY", "s1", "c1")
    eng.execute("XADD", "c1", "99999-1", "f", "v")      # grows the copied tail node
    expected = [full(eng.execute, key) for key in ("s1", "c1")]
    eng.execute("SAVE")
    eng.close(save=False)
    again = Engine(dir=str(tmp_path))
    try:
        assert [full(again.execute, key) for key in ("s1", "c1")] == expected
    finally:
        again.close(save=False)


def test_copy_errors_engine():
    eng = Engine(ManualClock(T0))
    eng.execute("SET", "a", "1")
    with pytest.raises(ResponseError, match="^ERR source and destination objects are the same$"):
        eng.execute("COPY", "a", "a")
    with pytest.raises(ResponseError, match="^ERR DB index is out of range$"):
        eng.execute("COPY", "a", "b", "DB", "16")


def test_copy_of_a_collection_uses_its_class_copy():
    eng = Engine(ManualClock(T0))
    db = eng.databases[0]
    records = {b"zset": [b"1", 2.0, b"3", 4.0]}          # scores are floats
    for name, cls in VALUE_TYPES.items():
        source = cls.from_record(records.get(name, [b"1", b"2", b"3", b"4"]))
        db.store(b"src", source)
        eng.execute("PEXPIREAT", "src", str(T0 + 10_000))
        assert eng.execute("COPY", "src", "dst", "DB", "1", "REPLACE") == 1
        copy = eng.databases[1].peek(b"dst")
        assert type(copy) is cls and copy is not source
        assert copy.to_record() == source.to_record()
        assert eng.databases[1].expire_at(b"dst") == T0 + 10_000
        eng.select(1)
        assert eng.execute("TYPE", "dst") == name
        eng.select(0)


def test_copy_into_another_database_dirties_its_watches_and_notifies():
    hub = Hub(Engine(), track=True)
    writer, watcher = Session(hub), Session(hub)
    writer.call([b"SET", b"src", b"v"])
    watcher.call([b"SELECT", b"1"])
    watcher.call([b"WATCH", b"dst"])
    watcher.call([b"MULTI"])
    watcher.call([b"GET", b"dst"])
    writer.call([b"COPY", b"src", b"dst", b"DB", b"1"])
    assert watcher.call([b"EXEC"]) is None             # dst of db 1 changed
    with server_in_thread() as server:
        client = redis.Redis(port=server.cfg.port)
        try:
            client.config_set("notify-keyspace-events", "KEg")
            sub = client.pubsub()
            sub.psubscribe("__key*__:*")
            assert sub.get_message(timeout=1)["type"] == "psubscribe"
            client.set("src", "v")
            client.execute_command("COPY", "src", "dst", "DB", "2")
            got = [sub.get_message(timeout=1) for _ in range(2)]
            assert {(m["channel"], m["data"]) for m in got} == {
                (b"__keyspace@2__:dst", b"copy_to"), (b"__keyevent@2__:copy_to", b"dst")}
            sub.close()
        finally:
            client.close()
