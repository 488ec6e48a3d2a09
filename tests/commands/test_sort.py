"""SORT and SORT_RO (engine/commands/sort.pyx) against redis-server 7.0: numeric and
ALPHA order, DESC, LIMIT, BY and GET patterns (strings, hash fields, `#`, missing
keys), BY without `*`, STORE (replace, delete when empty, TTL dropped), errors; the
keys GETKEYS finds; STORE's effects replay to the same list."""
from __future__ import annotations

from engine import Engine, ManualClock
from engine.commands.table import COMMANDS

from differential import run_both
from test_keys_strings import cmds

SETUP = cmds("""
    RPUSH l 3 1 2 10 -1.5 1e3 0x10
    RPUSH words banana apple cherry apple Date
    SADD s 5 3 9 1
    ZADD z 3 c 1 a 2 b 5 e
    MSET w_3 30 w_1 10 w_2 20 w_10 5 w_a 2 w_b 1 w_c 3
    HSET h_a f 3 name zed
    HSET h_b f 1 name amy
    HSET h_c f 2
    HSET h_e f 0 name bob
    MSET n_3 three n_1 one n_2 two
    SET str x
    RPUSH bad 1 two 3
""")

SORTS = cmds("""
    SORT l
    SORT l DESC
    SORT l ALPHA
    SORT l ALPHA DESC
    SORT l LIMIT 1 3
    SORT l LIMIT -5 2
    SORT l LIMIT 2 -1
    SORT l LIMIT 100 5
    SORT l LIMIT 0 0
    SORT l LIMIT 3 9223372036854775807
    SORT l LIMIT 9223372036854775807 9223372036854775807
    SORT words ALPHA
    SORT words ALPHA DESC LIMIT 1 2
    SORT words
    SORT s
    SORT s DESC LIMIT 0 2
    SORT z
    SORT z ALPHA DESC
    SORT z BY nosort
    SORT z BY nosort DESC
    SORT z BY nosort LIMIT 1 2
    SORT z BY nosort DESC LIMIT 1 2
    SORT l BY nosort
    SORT l BY nosort DESC LIMIT 2 3
    SORT s BY w_*
    SORT z BY w_* DESC
    SORT z BY h_*->f
    SORT z BY h_*->name ALPHA
    SORT z BY h_*->name ALPHA DESC
    SORT z BY h_*-> DESC
    SORT z BY h_*->missing
    SORT s BY w_* GET # GET n_*
    SORT z BY h_*->f GET h_*->name GET # GET nokey_*
    SORT z GET nostar
    SORT l BY w_* LIMIT 1 2
    SORT bad
    SORT bad ALPHA
    SORT bad BY nosort
    SORT missing
    SORT missing GET #
    SORT str
    SORT h_a
    SORT l LIMIT 1
    SORT l LIMIT x 1
    SORT l LIMIT 1 1.5
    SORT l FOO
    SORT l BY
    SORT l GET
    SORT_RO l DESC LIMIT 0 3
    SORT_RO z BY h_*->f GET #
    SORT_RO l STORE dst
    SORT l STORE dst
    LRANGE dst 0 -1
    SORT z BY h_*->f GET h_*->name GET # STORE dst
    LRANGE dst 0 -1
    SET dst old EX 100
    SORT s ALPHA STORE dst
    LRANGE dst 0 -1
    TTL dst
    SORT s BY nosort STORE dst2
    LRANGE dst2 0 -1
    SORT missing STORE dst
    EXISTS dst
    SORT l LIMIT 50 1 STORE dst
    SORT bad STORE dst3
    EXISTS dst3
    SORT
""")

# SORT and SORT_RO take a small sorted set to its skiplist encoding, as Redis does:
# a -0 score added later stays -0 (a listpack keeps it as 0)
ENCODINGS = cmds("""
    ZADD small 2 b 1 a
    OBJECT ENCODING small
    SORT_RO small BY nosort
    OBJECT ENCODING small
    ZADD small -0 c
    ZSCORE small c
    ZADD small2 1 a
    SORT small2 ALPHA LIMIT 0 1
    OBJECT ENCODING small2
    ZADD small2 -0 z
    ZRANGE small2 0 -1 WITHSCORES
""")


def test_sort_matches_redis(engine, oracle):
    run_both(engine, oracle, SETUP + SORTS, label="SORT")


def test_sort_converts_sorted_sets_as_redis(engine, oracle):
    run_both(engine, oracle, ENCODINGS, label="SORT encodings")


def test_sort_keys():
    sort = COMMANDS[b"sort"]
    assert sort.keys([b"SORT", b"k", b"GET", b"store", b"STORE", b"d"]) == [b"k", b"d"]
    assert sort.keys([b"SORT", b"k", b"LIMIT", b"0", b"1", b"BY", b"x"]) == [b"k"]
    assert COMMANDS[b"sort_ro"].keys([b"SORT_RO", b"k", b"STORE", b"d"]) == [b"k"]


def test_sort_store_effects_replay():
    eng = Engine(ManualClock(1_700_000_000_000))
    log: list = []
    eng.add_effect_listener(lambda db, effects: log.extend(effects))
    for argv in SETUP:
        eng.execute(*argv)
    log.clear()
    eng.execute("SET", "dst", "old")
    assert eng.execute("SORT", "z", "BY", "h_*->f", "GET", "#", "GET", "nokey_*",
                       "STORE", "dst") == 8
    assert log[-2:] == [[b"DEL", b"dst"], [b"RPUSH", b"dst", b"e", b"", b"b", b"",
                                           b"c", b"", b"a", b""]]
    replica = Engine(ManualClock(1_700_000_000_000))
    replica.execute("SET", "dst", "old")
    for effect in log[-2:]:
        replica.execute(*effect)
    assert replica.execute("LRANGE", "dst", "0", "-1") == eng.execute("LRANGE", "dst", "0", "-1")
    assert eng.execute("SORT", "missing", "STORE", "dst") == 0
    assert log[-1] == [b"DEL", b"dst"]
