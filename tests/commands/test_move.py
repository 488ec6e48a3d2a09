"""MOVE key db (engine/commands/key_copy.pyx): the value, its TTL with it, handed to
another database - replies and errors against redis-server 7.0; keyspace events in
both databases; its effects (COPY ... REPLACE + DEL) replay to the same state and
survive an AOF restart."""
from __future__ import annotations

from engine import Engine, ManualClock
from engine.commands.dispatch import dispatch

from differential import run_both
from engine_states import effect_log, expiries, replay
from test_keys_strings import cmds

T0 = 1_700_000_000_000

MOVE_SEQUENCE = cmds("""
    SET a hello
    MOVE a 1
    GET a
    SELECT 1
    GET a
    MOVE a 1
    MOVE a 0
    SELECT 0
    GET a
    SET a again
    MOVE a 1
    GET a
    MOVE missing 1
    MOVE a 16
    MOVE a -1
    MOVE a x
    MOVE a 2147483648
    MOVE a 1.5
    MOVE a
    MOVE a 1 extra
    SET t v PXAT 99999999999999
    MOVE t 2
    SELECT 2
    PEXPIRETIME t
    TYPE t
    SELECT 0
    XADD s 1-1 f v
    XGROUP CREATE s g 0
    XREADGROUP GROUP g c STREAMS s >
    MOVE s 3
    EXISTS s
    SELECT 3
    XPENDING s g
    XRANGE s - +
    RPUSH l x y
    MOVE l 0
    SELECT 0
    LRANGE l 0 -1
    DBSIZE
""")


def test_move_replies_and_errors(engine, oracle):
    run_both(engine, oracle, MOVE_SEQUENCE, label="MOVE")


def test_move_events_effects_and_replay():
    clock = ManualClock(T0)
    eng = Engine(clock)
    log = effect_log(eng)
    eng.execute("SET", "a", "1", "PXAT", str(T0 + 5000))
    eng.execute("XADD", "s", "1-1", "f", "v")
    ctx = eng.new_context()
    ctx.tracking = ctx.logging = True
    dispatch(ctx, [b"MOVE", b"a", b"2"])
    assert ctx.events == [("g", b"move_from", b"a"), ("g", b"move_to", (2, b"a"))]
    assert ctx.effects == [[b"COPY", b"a", b"a", b"DB", b"2", b"REPLACE"], [b"DEL", b"a"]]
    log.extend((0, e) for e in ctx.effects)
    eng.select(2)
    eng.execute("SET", "s", "old", "PXAT", str(T0 + 10))
    eng.select(0)
    assert eng.execute("MOVE", "s", "2") == 0          # the destination holds s
    clock.advance(100)
    assert eng.execute("MOVE", "s", "2") == 1          # ... until it expires
    replica = replay(log, ManualClock(T0 + 100))
    for ours, theirs in zip(eng.databases, replica.databases):
        assert expiries(ours) == expiries(theirs)
        assert sorted(ours.keys()) == sorted(theirs.keys())
    replica.select(2)
    assert replica.execute("XRANGE", "s", "-", "+") == [[b"1-1", [b"f", b"v"]]]
    assert replica.execute("PEXPIRETIME", "a") == T0 + 5000


def test_move_survives_aof_restart(tmp_path):
    eng = Engine(dir=str(tmp_path), appendonly=True, appendfsync="no")
    eng.execute("SET", "k", "v", "PXAT", "99999999999999")
    eng.execute("MOVE", "k", "1")
    eng.close(save=False)
    again = Engine(dir=str(tmp_path), appendonly=True)
    try:
        assert again.execute("EXISTS", "k") == 0
        again.select(1)
        assert again.execute("GET", "k") == b"v"
        assert again.execute("PEXPIRETIME", "k") == 99999999999999
    finally:
        again.close(save=False)
