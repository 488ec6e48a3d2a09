"""The string commands clients expect beyond SET/GET (engine/commands/strings.pyx,
string_edits.pyx): MSET, MSETNX, SETNX, SETEX, PSETEX, GETSET, GETEX, INCRBYFLOAT,
GETRANGE, SUBSTR, SETRANGE, LCS.

Differential tests run the same commands on Sluice and on redis-server 7.0 and
compare replies (errors included); a generated test mixes them with SET/GET/INCR/
EXPIRE. Engine-only tests check keyspace events and the effects (clock-free, and
replayed into a second engine: the same data and TTLs).
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Engine, ManualClock, ResponseError
from engine.commands.dispatch import dispatch

from differential import run_both
from engine_states import contents, expiries
from test_keys_strings import cmds

T0 = 1_700_000_000_000
ORACLE_FIXTURE_HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]

SET_FAMILY = cmds("""
    MSET a 1 b 2 c 3
    MGET a b c
    MSET a
    MSET a 1 b
    MSET
    MSET a 10 a 11
    GET a
    SET t 1 PXAT 99999999999999
    MSET t 2
    PEXPIRETIME t
    XADD s 1-1 f v
    MSET s 1
    TYPE s
    MSETNX a 1 zz 2
    EXISTS zz
    MSETNX y 1 zz 2
    MGET y zz
    MSETNX y
    MSETNX q 1 q 2
    GET q
    XADD s2 1-1 f v
    MSETNX s2 1 fresh 2
    SETNX a 5
    SETNX n 5
    GET n
    SETNX n
    SETNX s2 x
    SETEX e 100 v
    TTL e
    SETEX e 0 v
    SETEX e -1 v
    SETEX e x v
    SETEX e 1.5 v
    SETEX e 9223372036854775 v
    SETEX e 9223372036854776 v
    SETEX e 100
    PSETEX p 100000 v
    PSETEX p 0 v
    PSETEX p -5 v
    PSETEX p 9223372036854775807 v
    PSETEX p abc v
    SETEX s2 100 v
    TYPE s2
    GETSET a new
    GETSET nothere v
    GET nothere
    GETSET s x
    XADD s3 1-1 f v
    GETSET s3 x
    TYPE s3
    SET t 1 PXAT 99999999999999
    GETSET t 2
    PEXPIRETIME t
    GETSET t
""")

GETEX_SEQUENCE = cmds("""
    SET a hello
    GETEX a
    GETEX missing
    GETEX missing EX 10
    GETEX missing EX abc
    GETEX a PXAT 99999999999999
    PEXPIRETIME a
    GETEX a EXAT 99999999999
    PEXPIRETIME a
    GETEX a PERSIST
    PEXPIRETIME a
    GETEX a PERSIST
    GETEX a persist persist
    GETEX a EX 100
    TTL a
    GETEX a PX 100000
    GETEX a EX 0
    GETEX a EX -1
    GETEX a PX 0
    GETEX a EX abc
    GETEX a EX 1.5
    GETEX a EX 9223372036854776
    GETEX a PX 9223372036854775807
    GETEX a EXAT 0
    GETEX a PXAT -1
    GETEX a EX 10 PX 10
    GETEX a EX 10 PERSIST
    GETEX a PERSIST EX 10
    GETEX a EX 10 EX 20
    GETEX a EX
    GETEX a KEEPTTL
    GETEX a NX
    GETEX a GET
    GETEX a foo
    XADD s 1-1 f v
    GETEX s
    GETEX s PERSIST
    GETEX s EX abc
    GETEX s foo
    GETEX a PXAT 1
    EXISTS a
    SET a 1
    GETEX a EXAT 1
    EXISTS a
    GETEX
""")

INCRBYFLOAT_SEQUENCE = cmds("""
    INCRBYFLOAT f 1.5
    INCRBYFLOAT f 0.1
    INCRBYFLOAT f -1.6
    INCRBYFLOAT f 0
    INCRBYFLOAT f -0
    INCRBYFLOAT g 10.5e3
    INCRBYFLOAT g 5.0e3
    INCRBYFLOAT g 1e-5
    INCRBYFLOAT g 3e300
    INCRBYFLOAT g 1e308
    INCRBYFLOAT g -1e308
    INCRBYFLOAT h 0x10
    INCRBYFLOAT h .5
    INCRBYFLOAT h 5.
    INCRBYFLOAT h +5
    INCRBYFLOAT h inf
    INCRBYFLOAT h -inf
    INCRBYFLOAT h nan
    INCRBYFLOAT h abc
    INCRBYFLOAT h ''
    INCRBYFLOAT h 1e5000
    INCRBYFLOAT h 1e-5000
    GET h
    SET i 3
    INCRBYFLOAT i 1
    INCRBYFLOAT i 0.3333333333333333
    INCRBYFLOAT i 1.23456789012345678901234567890
    SET j 1e3
    INCRBYFLOAT j 1
    SET j abc
    INCRBYFLOAT j 1
    SET k 1.7976931348623157e308
    INCRBYFLOAT k 1.7976931348623157e308
    INCRBYFLOAT k 1.7976931348623157e308
    GET k
    SET t 1 PXAT 99999999999999
    INCRBYFLOAT t 1.5
    PEXPIRETIME t
    XADD s 1-1 f v
    INCRBYFLOAT s 1
    INCRBYFLOAT s x
    INCRBYFLOAT
    INCRBYFLOAT a
""")

RANGE_SEQUENCE = cmds("""
    SET r 0123456789
    GETRANGE r 0 -1
    GETRANGE r 0 3
    GETRANGE r -3 -1
    GETRANGE r 5 2
    GETRANGE r 0 -100
    GETRANGE r -100 -99
    GETRANGE r -100 -101
    GETRANGE r -1 -100
    GETRANGE r 1 -100
    GETRANGE r 100 200
    GETRANGE r 9 100
    GETRANGE r -9223372036854775808 9223372036854775807
    GETRANGE r a 1
    GETRANGE r 1 b
    GETRANGE r 1.5 2
    GETRANGE missing 0 -1
    GETRANGE missing a 1
    SUBSTR r 2 4
    SUBSTR r -2 -1
    SUBSTR missing 0 1
    SET e ''
    GETRANGE e 0 -1
    GETRANGE e 0 0
    SET n 12345
    INCR n
    GETRANGE n 1 2
    XADD s 1-1 f v
    GETRANGE s 0 1
    GETRANGE s x 1
    SUBSTR s 0 1
    GETRANGE r 0
    SETRANGE w 0 hello
    GET w
    SETRANGE w 3 LO!
    GET w
    SETRANGE w 10 x
    GET w
    STRLEN w
    SETRANGE w 1 ''
    SETRANGE empty 0 ''
    SETRANGE empty 5 ''
    EXISTS empty
    SETRANGE gap 3 x
    GET gap
    SETRANGE w -1 x
    SETRANGE w x x
    SETRANGE w 1.5 x
    SETRANGE w 536870911 xx
    SETRANGE w 536870912 x
    SETRANGE w 9223372036854775807 x
    SETRANGE w -1 ''
    SETRANGE missing2 536870912 ''
    SETRANGE missing2 536870912 x
    SETRANGE s 0 x
    SETRANGE s 0 ''
    SETRANGE s -1 x
    SET t 1 PXAT 99999999999999
    SETRANGE t 1 23
    PEXPIRETIME t
    GET t
    SET n 100
    SETRANGE n 1 5
    INCR n
    SETRANGE w 0
""")

LCS_SEQUENCE = cmds("""
    MSET a ohmytext b mynewtext
    LCS a b
    LCS a b LEN
    LCS a b IDX
    LCS a b IDX MINMATCHLEN 4
    LCS a b IDX MINMATCHLEN 4 WITHMATCHLEN
    LCS a b IDX WITHMATCHLEN
    LCS a b idx minmatchlen -5
    LCS a b IDX MINMATCHLEN x
    LCS a b IDX MINMATCHLEN
    LCS a b IDX LEN
    LCS a b LEN IDX
    LCS a b foo
    LCS a missing
    LCS missing missing2 IDX
    LCS missing a LEN
    LCS a a IDX WITHMATCHLEN
    MSET c ABCBDAB d BDCABA
    LCS c d
    LCS c d IDX WITHMATCHLEN
    LCS d c IDX
    XADD s 1-1 f v
    LCS a s
    LCS s missing
    LCS a
""")


def test_set_family(engine, oracle):
    run_both(engine, oracle, SET_FAMILY, label="set family")


def test_getex(engine, oracle):
    run_both(engine, oracle, GETEX_SEQUENCE, label="GETEX")


def test_incrbyfloat(engine, oracle):
    run_both(engine, oracle, INCRBYFLOAT_SEQUENCE + [
        ("SET", "j", " 1"), ("INCRBYFLOAT", "j", "1"), ("SET", "j", "1 "),
        ("INCRBYFLOAT", "j", "1"), ("INCRBYFLOAT", "j2", " 1"), ("INCRBYFLOAT", "j2", "1 "),
        ("INCRBYFLOAT", "j2", "1" * 6000)], label="INCRBYFLOAT")


def test_ranges(engine, oracle):
    run_both(engine, oracle, RANGE_SEQUENCE, label="GETRANGE/SETRANGE")


def test_lcs(engine, oracle):
    run_both(engine, oracle, LCS_SEQUENCE, label="LCS")


def test_binary_values(engine, oracle):
    blob = bytes(range(256))
    run_both(engine, oracle, [
        ("MSET", b"k\x00", blob, b"\xff", b"\x00\x01"), ("MGET", b"k\x00", b"\xff"),
        ("SETRANGE", b"k\x00", "250", b"\x00\xfe\x00"), ("GET", b"k\x00"),
        ("GETRANGE", b"k\x00", "-8", "-1"), ("GETSET", b"\xff", b"\x80"),
        ("SET", "f", b"1.5\x00junk"), ("INCRBYFLOAT", "f", "1"),
        ("INCRBYFLOAT", "f", b"2\x00x"), ("LCS", b"k\x00", b"\xff"),
        ("SETEX", b"\x00", "100", b"\x00"), ("GETEX", b"\x00", "PERSIST"), ("TTL", b"\x00"),
    ])


# Generated sequences: the string commands mixed with SET/GET/INCR/EXPIRE on a few
# keys (absolute times far in the future, relative ones compared loosely at the end).
KEYS = ["a", "b", "c"]
FAR_MS = 99_999_999_999_999


def _string_command(draw) -> list:
    key = draw(st.sampled_from(KEYS))
    other = draw(st.sampled_from(KEYS))
    value = draw(st.sampled_from(["", "0", "7", "-3", "1.5", "abc", "9223372036854775807",
                                  "1e3", "x" * 20]))
    num = draw(st.sampled_from(["0", "1", "-1", "3", "100", "abc", "-100"]))
    at = str(FAR_MS - draw(st.integers(0, 1000)))
    ttl = draw(st.sampled_from(["100", "100000", "0", "-1", "abc"]))   # none expires mid-run
    return draw(st.sampled_from([
        ["SET", key, value], ["GET", key], ["INCR", key], ["INCRBY", key, num],
        ["PEXPIREAT", key, at], ["PERSIST", key], ["DEL", key],
        ["MSET", key, value, other, value], ["MSETNX", key, value, other, value],
        ["SETNX", key, value], ["SETEX", key, ttl, value], ["PSETEX", key, ttl, value],
        ["GETSET", key, value], ["GETEX", key], ["GETEX", key, "PXAT", at],
        ["GETEX", key, "PERSIST"], ["GETEX", key, "EXAT", num], ["GETEX", key, "EX", ttl],
        ["INCRBYFLOAT", key, value], ["INCRBYFLOAT", key, num],
        ["GETRANGE", key, num, num], ["SUBSTR", key, num, "-1"],
        ["SETRANGE", key, num, value], ["APPEND", key, value], ["STRLEN", key],
        ["LCS", key, other], ["LCS", key, other, "IDX", "WITHMATCHLEN"],
        ["XADD", key, "1-1", "f", "v"], ["TYPE", key], ["EXISTS", key],
    ]))


@settings(max_examples=60, deadline=None, suppress_health_check=ORACLE_FIXTURE_HEALTH)
@given(data=st.data())
def test_generated_sequences(engine, oracle, data):
    engine.execute("FLUSHALL")
    oracle.execute("FLUSHALL")
    sequence = [_string_command(data.draw) for _ in range(data.draw(st.integers(1, 25)))]
    run_both(engine, oracle, sequence + [["MGET"] + KEYS], label="generated")
    # SETEX/PSETEX/GETEX EX set relative TTLs: equal within the runs' time apart.
    for key in KEYS:
        ours, theirs = engine.execute("PEXPIRETIME", key), oracle.execute("PEXPIRETIME", key)
        assert (ours == theirs if min(ours, theirs) < 0 else abs(ours - theirs) < 2000), key


# ------------------------------------------------------------------------------------
# Engine-only: keyspace events and effects
# ------------------------------------------------------------------------------------

@pytest.fixture
def clocked():
    clock = ManualClock(T0)
    eng = Engine(clock)
    log: list = []
    eng.add_effect_listener(lambda db, effects: log.extend(effects))
    return eng, clock, log


def test_keyspace_events(clocked):
    eng, clock, log = clocked
    ctx = eng.new_context()
    ctx.tracking = True

    def run(*args):
        ctx.events, ctx.touched, ctx.effects = [], [], []
        dispatch(ctx, [a.encode() if isinstance(a, str) else a for a in args])
        return ctx.events

    assert run("MSET", "a", "1", "b", "2") == [("$", b"set", b"a"), ("$", b"set", b"b")]
    assert run("MSETNX", "a", "1", "c", "2") == []
    assert run("MSETNX", "c", "1", "d", "2") == [("$", b"set", b"c"), ("$", b"set", b"d")]
    assert run("SETNX", "a", "1") == []
    assert run("SETNX", "e", "1") == [("$", b"set", b"e")]
    assert run("SETEX", "a", "10", "v") == [("$", b"set", b"a"), ("g", b"expire", b"a")]
    assert run("PSETEX", "a", "10", "v") == [("$", b"set", b"a"), ("g", b"expire", b"a")]
    assert run("GETSET", "a", "w") == [("$", b"set", b"a")]
    assert run("GETEX", "a") == []
    assert run("GETEX", "a", "PERSIST") == []          # no TTL: nothing changes
    assert run("GETEX", "a", "EX", "10") == [("g", b"expire", b"a")]
    assert run("GETEX", "a", "PERSIST") == [("g", b"persist", b"a")]
    assert run("GETEX", "a", "PXAT", str(T0)) == [("g", b"del", b"a")]
    assert run("INCRBYFLOAT", "f", "1.5") == [("$", b"incrbyfloat", b"f")]
    assert run("SETRANGE", "f", "1", "x") == [("$", b"setrange", b"f")]
    assert run("SETRANGE", "f", "1", "") == []
    assert run("GETRANGE", "f", "0", "-1") == []
    assert run("LCS", "f", "b") == []


def test_effects_are_clock_free(clocked):
    eng, clock, log = clocked
    eng.execute("SETEX", "a", "10", "v")
    eng.execute("PSETEX", "b", "500", "v")
    eng.execute("SETNX", "c", "1")
    eng.execute("SETNX", "c", "2")
    eng.execute("GETSET", "c", "3")
    eng.execute("MSET", "d", "1", "e", "2")
    eng.execute("MSETNX", "d", "1", "f", "2")
    eng.execute("MSETNX", "f", "1", "g", "2")
    eng.execute("GETEX", "a", "EX", "20")
    eng.execute("GETEX", "a", "PXAT", str(T0 + 99))
    eng.execute("GETEX", "a", "PERSIST")
    eng.execute("GETEX", "a", "PERSIST")
    eng.execute("GETEX", "b", "EXAT", "1")
    eng.execute("INCRBYFLOAT", "c", "0.5")
    eng.execute("SETRANGE", "d", "3", "xy")
    eng.execute("SETRANGE", "d", "3", "")
    assert log == [
        [b"SET", b"a", b"v", b"PXAT", str(T0 + 10_000).encode()],
        [b"SET", b"b", b"v", b"PXAT", str(T0 + 500).encode()],
        [b"SET", b"c", b"1"],
        [b"SET", b"c", b"3"],
        [b"MSET", b"d", b"1", b"e", b"2"],
        [b"MSET", b"f", b"1", b"g", b"2"],
        [b"PEXPIREAT", b"a", str(T0 + 20_000).encode()],
        [b"PEXPIREAT", b"a", str(T0 + 99).encode()],
        [b"PERSIST", b"a"],
        [b"DEL", b"b"],
        [b"SET", b"c", b"3.5", b"KEEPTTL"],
        [b"SETRANGE", b"d", b"3", b"xy"],
    ]


def test_incrbyfloat_keeps_ttl_and_setrange_limit(clocked):
    eng, clock, log = clocked
    eng.execute("SET", "a", "1", "PX", "1000")
    assert eng.execute("INCRBYFLOAT", "a", "2.25") == b"3.25"
    assert eng.execute("PEXPIRETIME", "a") == T0 + 1000
    with pytest.raises(ResponseError, match=r"^ERR string exceeds maximum allowed size"):
        eng.execute("SETRANGE", "a", str(512 * 1024 * 1024 - 1), "xy")
    with pytest.raises(ResponseError, match=r"^ERR string exceeds maximum allowed size"):
        eng.execute("SETRANGE", "a", str(2**62), "x")
    assert eng.execute("GET", "a") == b"3.25"


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_effects_replay_to_the_same_state(data):
    clock = ManualClock(T0)
    primary = Engine(clock)
    log: list = []
    primary.add_effect_listener(lambda db, effects: log.extend(effects))
    for _ in range(data.draw(st.integers(1, 30))):
        clock.advance(data.draw(st.integers(0, 3000)))
        try:
            primary.execute(*_string_command(data.draw))
        except ResponseError:
            pass
    replica = Engine(ManualClock(T0 - 10**9))
    for effect in log:
        replica.execute(*effect)
    assert expiries(primary.databases[0]) == expiries(replica.databases[0])
    strings = {k: v for k, v in contents(primary.databases[0]).items() if type(v) is bytes}
    assert strings == {k: v for k, v in contents(replica.databases[0]).items() if type(v) is bytes}
