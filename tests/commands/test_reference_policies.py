"""Redis 8.2's reference policies on streams: XDELEX, XACKDEL, and KEEPREF | DELREF |
ACKED on XADD and XTRIM. Redis 7.0 has none of them (DELIBERATE_DIFFERENCES), so
these tests follow the newest documentation (redis.io xdelex, xackdel, xadd, xtrim)
and port the cases of redis/redis tests/unit/type/stream-cgroups.tcl; a model test
drives random commands against a Python model of a stream with several groups.

Codes per ID: -1 no such entry (XACKDEL: not pending in the group), 1 deleted
(XACKDEL: acknowledged, and deleted or already gone), 2 kept because a group still
references it (ACKED: some group has not read it yet, or has it pending)."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from differential import RedisOracle, excluded_difference, run_both
from engine import Engine, ManualClock, ResponseError
from engine_states import logged_state
from engine.commands.table import COMMANDS

T0 = 1_700_000_000_000
SYNTAX = "ERR syntax error"
NOT_POSITIVE = "ERR Number of IDs must be a positive integer"
MISMATCH = "ERR The `numids` parameter must match the number of arguments"


def error(engine: Engine, *argv) -> str:
    with pytest.raises(ResponseError) as failure:
        engine.execute(*argv)
    return str(failure.value)


def pending_summary(engine: Engine, key: str, group: str) -> list:
    return engine.execute("XPENDING", key, group)


def two_groups_reading(engine: Engine, ids=("1-0", "2-0")) -> None:
    """mystream with `ids`, group1 and group2 each having read all of them."""
    engine.execute("DEL", "mystream")
    for i in ids:
        engine.execute("XADD", "mystream", i, "f", "v")
    for n in (1, 2):
        engine.execute("XGROUP", "CREATE", "mystream", f"group{n}", "0")
        engine.execute("XREADGROUP", "GROUP", f"group{n}", f"consumer{n}", "STREAMS",
                       "mystream", ">")


def xackdel_both(engine: Engine, group: str, *policy: str) -> list:
    """XACKDEL in `group` of mystream's 1-0 and 2-0 (two_groups_reading's entries)."""
    return engine.execute("XACKDEL", "mystream", group, *policy, "IDS", "2", "1-0", "2-0")


def xdelex_both(engine: Engine, *policy: str) -> list:
    """XDELEX of mystream's 1-0 and 2-0 (two_groups_reading's entries)."""
    return engine.execute("XDELEX", "mystream", *policy, "IDS", "2", "1-0", "2-0")


EMPTY_PEL = [0, None, None, None]
GROUP2_PEL = [2, b"1-0", b"2-0", [[b"consumer2", b"2"]]]
"""XPENDING's summary of group2 as two_groups_reading leaves it."""


# -- arguments --------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [("XACKDEL",), ("XACKDEL", "s"), ("XACKDEL", "s", "g"),
                                  ("XACKDEL", "s", "g", "IDS", "1"),
                                  ("XDELEX", "s"), ("XDELEX", "s", "IDS", "1")])
def test_wrong_number_of_arguments(engine, argv):
    name = argv[0].lower()
    assert error(engine, *argv) == f"ERR wrong number of arguments for '{name}' command"


@pytest.mark.parametrize("command", [("XACKDEL", "s", "g"), ("XDELEX", "s")])
def test_ids_block_validation(engine, command):
    engine.execute("XADD", "s", "1-0", "f", "v")
    engine.execute("XGROUP", "CREATE", "s", "g", "0")
    for numids in ("abc", "0", "-5", "1.5", "99999999999999999999"):
        assert error(engine, *command, "IDS", numids, "1-1") == NOT_POSITIVE
    assert error(engine, *command, "IDS", "3", "1-1", "2-2") == MISMATCH
    assert error(engine, *command, "IDS", "1", "1-1", "2-2") == SYNTAX
    assert error(engine, *command, "IDS", "1", "1-1", "IDS") == SYNTAX
    assert error(engine, *command, "BOGUS", "IDS", "1", "1-1") == SYNTAX
    assert error(engine, *command, "IDS", "1", "not-an-id") == \
        "ERR Invalid stream ID specified as stream command argument"
    assert error(engine, *command, "IDS", "2", "1-0", "+") == \
        "ERR Invalid stream ID specified as stream command argument"


@pytest.mark.parametrize("command", [("XACKDEL", "s", "g"), ("XDELEX", "s")])
def test_policy_validation(engine, command):
    engine.execute("XADD", "s", "1-0", "f", "v")
    engine.execute("XGROUP", "CREATE", "s", "g", "0")
    for first, second in (("KEEPREF", "DELREF"), ("KEEPREF", "ACKED"), ("DELREF", "ACKED"),
                          ("ACKED", "ACKED")):
        assert error(engine, *command, first, second, "IDS", "1", "1-1") == SYNTAX
    assert error(engine, *command, "IDS", "1", "1-1", "KEEPREF", "ACKED") == SYNTAX
    # the policy may follow the IDS block, in any letter case
    assert engine.execute(*command, "IDS", "1", "5-5", "delref") == [-1]
    assert engine.execute(*command, "kEePrEf", "IDS", "1", "5-5") == [-1]


def test_errors_change_nothing(engine):
    two_groups_reading(engine)
    assert error(engine, "XDELEX", "mystream", "IDS", "2", "1-0", "bad") == \
        "ERR Invalid stream ID specified as stream command argument"
    assert error(engine, "XACKDEL", "mystream", "group1", "IDS", "2", "1-0", "bad") == \
        "ERR Invalid stream ID specified as stream command argument"
    assert engine.execute("XLEN", "mystream") == 2
    assert pending_summary(engine, "mystream", "group1")[0] == 2


def test_wrong_type(engine):
    engine.execute("SET", "str", "x")
    wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert error(engine, "XDELEX", "str", "IDS", "1", "1-0") == wrongtype
    assert error(engine, "XACKDEL", "str", "g", "IDS", "1", "1-0") == wrongtype


@pytest.mark.parametrize("argv, error_text", [
    (("XADD", "s", "KEEPREF", "DELREF", "*", "f", "v"), SYNTAX),
    (("XADD", "s", "ACKED", "MAXLEN", "1", "ACKED", "*", "f", "v"), SYNTAX),
    (("XTRIM", "s", "MAXLEN", "1", "DELREF", "KEEPREF"), SYNTAX),
    (("XTRIM", "s", "DELREF", "ACKED"), SYNTAX),
    (("XTRIM", "s", "LIMIT", "5", "ACKED"),
     "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"),
    (("XADD", "s", "KEEPREFS", "*", "f", "v"),
     "ERR Invalid stream ID specified as stream command argument"),
])
def test_xadd_xtrim_policy_errors(engine, argv, error_text):
    engine.execute("XADD", "s", "1-0", "f", "v")
    assert error(engine, *argv) == error_text
    assert engine.execute("XLEN", "s") == 1


# -- what Redis 7.0 has stays as it was --------------------------------------------------

PLAIN_TRIMS = [
    ("XGROUP", "CREATE", "p", "g", "0", "MKSTREAM"),
    ("XADD", "p", "1-0", "KEEPREF", "v"),              # the words as fields and values
    ("XADD", "p", "2-0", "f", "ACKED"),
    ("XADD", "p", "MAXLEN", "5", "3-0", "DELREF", "x"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "p", ">"),
    ("XADD", "p", "MAXLEN", "2", "4-0", "f", "v"),
    ("XPENDING", "p", "g", "-", "+", "10"),
    ("XADD", "p", "MINID", "=", "4-0", "5-0", "f", "v"),
    ("XTRIM", "p", "MINID", "5-0"),
    ("XTRIM", "p", "MAXLEN", "~", "0", "LIMIT", "10"),
    ("XPENDING", "p", "g"),
    ("XRANGE", "p", "-", "+"),
    ("XTRIM", "p", "MAXLEN", "0", "KEEPREFX"),
    ("XDEL", "p", "5-0"),
    ("XACK", "p", "g", "1-0", "2-0"),
    ("XPENDING", "p", "g"),
    ("XINFO", "STREAM", "p"),
]


def test_plain_trimming_matches_redis_7_0(engine, oracle: RedisOracle):
    """XADD/XTRIM without a policy leave the PELs alone, exactly as 7.0 does."""
    assert not any(excluded_difference(cmd) for cmd in PLAIN_TRIMS)
    run_both(engine, oracle, PLAIN_TRIMS, label="plain trims")


def test_command_records():
    """As src/commands/xdelex.json and xackdel.json declare them."""
    for name, arity in ((b"xdelex", -5), (b"xackdel", -6)):
        record = COMMANDS[name]
        assert (record.arity, record.flags, record.first_key, record.last_key, record.step,
                record.since, record.group) == (arity, ("write", "fast"), 1, 1, 1, "8.2.0",
                                                "stream")


# -- XACKDEL (stream-cgroups.tcl) ---------------------------------------------------------

def test_xackdel_missing_key_or_group(engine):
    assert engine.execute("XACKDEL", "s", "g", "IDS", "2", "1-1", "2-2") == [-1, -1]
    engine.execute("XADD", "s", "1-0", "f", "v")
    assert engine.execute("XACKDEL", "s", "g", "IDS", "2", "1-1", "2-2") == [-1, -1]


@pytest.mark.parametrize("policy, codes, length, group2_pel, codes_then", [
    pytest.param("DELREF", [1, 1], 0, EMPTY_PEL, [-1, -1],
                 id="DELREF removes the entries from every PEL"),
    pytest.param("ACKED", [2, 2], 2, GROUP2_PEL, [1, 1],
                 id="ACKED deletes only when all groups acknowledged"),
    pytest.param("KEEPREF", [1, 1], 0, GROUP2_PEL, [1, 1],
                 id="KEEPREF leaves group2 dangling references it acknowledges with 1"),
])
def test_xackdel_in_group1_then_group2(engine, policy, codes, length, group2_pel,
                                       codes_then):
    two_groups_reading(engine)
    assert xackdel_both(engine, "group1", policy) == codes
    assert engine.execute("XLEN", "mystream") == length
    assert pending_summary(engine, "mystream", "group1") == EMPTY_PEL
    assert pending_summary(engine, "mystream", "group2") == group2_pel
    assert xackdel_both(engine, "group2", policy) == codes_then
    assert engine.execute("XLEN", "mystream") == 0
    assert pending_summary(engine, "mystream", "group2") == EMPTY_PEL


def test_xackdel_of_an_entry_not_pending_in_the_group(engine):
    two_groups_reading(engine)
    engine.execute("XADD", "mystream", "3-0", "f", "v")
    assert engine.execute("XACKDEL", "mystream", "group1", "IDS", "1", "3-0") == [-1]
    assert engine.execute("XLEN", "mystream") == 3


def test_xackdel_many_ids(engine):
    engine.execute("XGROUP", "CREATE", "mystream", "mygroup", "$", "MKSTREAM")
    ids = [f"{i}-1" for i in range(50)]
    assert engine.execute("XACKDEL", "mystream", "mygroup", "IDS", "50", *ids) == [-1] * 50


# -- XDELEX -------------------------------------------------------------------------------

def test_xdelex_missing_key(engine):
    assert engine.execute("XDELEX", "s", "IDS", "2", "1-1", "2-2") == [-1, -1]
    assert engine.execute("EXISTS", "s") == 0
    for argv in (("XDELEX", "s"), ("XACKDEL", "s", "g")):
        assert error(engine, *argv, "IDS", "2", "1-1", "x") == \
            "ERR Invalid stream ID specified as stream command argument"


def test_xdelex_keepref_is_xdel(engine):
    two_groups_reading(engine, ("1-0", "2-0", "3-0"))
    assert engine.execute("XDELEX", "mystream", "IDS", "3", "2-0", "9-0", "2-0") == [1, -1, -1]
    assert [e[0] for e in engine.execute("XRANGE", "mystream", "-", "+")] == [b"1-0", b"3-0"]
    assert pending_summary(engine, "mystream", "group1")[0] == 3
    info = engine.execute("XINFO", "STREAM", "mystream")
    assert info[info.index(b"max-deleted-entry-id") + 1] == b"2-0"


def test_xdelex_delref_removes_entry_from_all_pels(engine):
    two_groups_reading(engine)
    assert engine.execute("XDELEX", "mystream", "DELREF", "IDS", "1", "1-0") == [1]
    for group in ("group1", "group2"):
        assert engine.execute("XPENDING", "mystream", group, "-", "+", 10)[0][0] == b"2-0"
        assert pending_summary(engine, "mystream", group)[0] == 1


def test_xdelex_delref_cleans_dangling_references(engine):
    two_groups_reading(engine)
    engine.execute("XDEL", "mystream", "1-0")
    assert pending_summary(engine, "mystream", "group1")[0] == 2
    assert engine.execute("XDELEX", "mystream", "DELREF", "IDS", "1", "1-0") == [-1]
    assert pending_summary(engine, "mystream", "group1")[0] == 1
    assert pending_summary(engine, "mystream", "group2")[0] == 1


def test_xdelex_acked_only_deletes_entries_acknowledged_by_all_groups(engine):
    two_groups_reading(engine)
    assert xdelex_both(engine, "ACKED") == [2, 2]
    engine.execute("XACK", "mystream", "group1", "1-0", "2-0")
    assert xdelex_both(engine, "ACKED") == [2, 2]
    engine.execute("XACK", "mystream", "group2", "1-0")
    assert xdelex_both(engine, "ACKED") == [1, 2]
    assert engine.execute("XLEN", "mystream") == 1


def test_xdelex_acked_keeps_entries_a_new_group_has_not_read(engine):
    two_groups_reading(engine)
    engine.execute("XACK", "mystream", "group1", "1-0", "2-0")
    engine.execute("XACK", "mystream", "group2", "1-0", "2-0")
    engine.execute("XGROUP", "CREATE", "mystream", "group3", "0")
    assert xdelex_both(engine, "ACKED") == [2, 2]
    engine.execute("XGROUP", "SETID", "mystream", "group3", "1-0")
    assert xdelex_both(engine, "ACKED") == [1, 2]


def test_xdelex_acked_without_groups_deletes(engine):
    engine.execute("XADD", "s", "1-0", "f", "v")
    assert engine.execute("XDELEX", "s", "ACKED", "IDS", "2", "1-0", "2-0") == [1, -1]


def test_xgroup_destroy_removes_all_consumer_group_references(engine):
    engine.execute("DEL", "mystream")
    ids = [f"{j}-1" for j in range(5)]
    for j, i in enumerate(ids):
        engine.execute("XADD", "mystream", i, "item", str(j))
    engine.execute("XGROUP", "CREATE", "mystream", "mygroup", "0")
    engine.execute("XREADGROUP", "GROUP", "mygroup", "consumer1", "STREAMS", "mystream", ">")
    assert engine.execute("XDELEX", "mystream", "ACKED", "IDS", "5", *ids) == [2] * 5
    engine.execute("XGROUP", "DESTROY", "mystream", "mygroup")
    assert engine.execute("XDELEX", "mystream", "ACKED", "IDS", "5", *ids) == [1] * 5
    assert engine.execute("XLEN", "mystream") == 0


def test_xgroup_destroy_moves_the_oldest_group_position(engine):
    for i in range(1, 6):
        engine.execute("XADD", "mystream", f"{i}-0", f"f{i}", f"v{i}")
    engine.execute("XGROUP", "CREATE", "mystream", "group1", "1-0")
    engine.execute("XGROUP", "CREATE", "mystream", "group2", "3-0")
    assert engine.execute("XDELEX", "mystream", "ACKED", "IDS", "1", "1-0") == [1]
    assert engine.execute("XDELEX", "mystream", "ACKED", "IDS", "1", "2-0") == [2]
    engine.execute("XGROUP", "DESTROY", "mystream", "group1")
    assert engine.execute("XDELEX", "mystream", "ACKED", "IDS", "1", "2-0") == [1]


# -- XADD / XTRIM with a policy ---------------------------------------------------------

def test_trim_keepref_is_the_default(engine):
    two_groups_reading(engine, ("1-0", "2-0", "3-0"))
    assert engine.execute("XTRIM", "mystream", "MAXLEN", "1", "KEEPREF") == 2
    assert pending_summary(engine, "mystream", "group1")[0] == 3


def test_trim_delref_drops_trimmed_entries_from_every_pel(engine):
    two_groups_reading(engine, ("1-0", "2-0", "3-0", "4-0"))
    engine.execute("XDEL", "mystream", "3-0")            # a dangling reference stays
    assert engine.execute("XTRIM", "mystream", "MINID", "3-0", "DELREF") == 2
    for group in ("group1", "group2"):
        assert [p[0] for p in engine.execute("XPENDING", "mystream", group, "-", "+", 9)] == \
            [b"3-0", b"4-0"]
    assert engine.execute("XADD", "mystream", "DELREF", "MAXLEN", "1", "5-0", "f", "v") == b"5-0"
    for group in ("group1", "group2"):
        assert [p[0] for p in engine.execute("XPENDING", "mystream", group, "-", "+", 9)] == \
            [b"3-0"]


def test_trim_acked_keeps_referenced_entries(engine):
    two_groups_reading(engine, ("1-0", "2-0", "3-0", "4-0"))
    engine.execute("XACK", "mystream", "group1", "1-0", "2-0", "3-0")
    engine.execute("XACK", "mystream", "group2", "1-0", "3-0")
    assert engine.execute("XTRIM", "mystream", "MAXLEN", "0", "ACKED") == 2
    assert [e[0] for e in engine.execute("XRANGE", "mystream", "-", "+")] == [b"2-0", b"4-0"]
    # the new entry is unread by both groups: ACKED trimming never takes it
    engine.execute("XADD", "mystream", "ACKED", "MAXLEN", "0", "5-0", "f", "v")
    assert [e[0] for e in engine.execute("XRANGE", "mystream", "-", "+")] == \
        [b"2-0", b"4-0", b"5-0"]
    engine.execute("XACK", "mystream", "group2", "2-0")
    assert engine.execute("XTRIM", "mystream", "MINID", "5-0", "ACKED") == 1
    assert engine.execute("XTRIM", "mystream", "MAXLEN", "~", "0", "ACKED") == 0


def test_trim_acked_with_limit():
    """LIMIT caps the entries of the nodes taken, as without a policy."""
    engine = Engine(stream_node_max_entries=2)
    engine.execute("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    for i in range(1, 11):
        engine.execute("XADD", "s", f"{i}-0", "f", "v")
    engine.execute("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    engine.execute("XACK", "s", "g", *[f"{i}-0" for i in range(1, 11)])
    assert engine.execute("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "3", "ACKED") == 2
    assert engine.execute("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "4", "ACKED") == 4
    assert engine.execute("XLEN", "s") == 4


def acked_nodes(ids_acked: int) -> Engine:
    """Nodes of two entries (1-0 2-0 | 3-0 4-0 | ...), one group that read 1-0..4-0
    and acknowledged the first `ids_acked` of them."""
    engine = Engine(stream_node_max_entries=2)
    for i in range(1, 5):
        engine.execute("XADD", "mystream", f"{i}-0", "f", "v")
    engine.execute("XGROUP", "CREATE", "mystream", "g", "0")
    engine.execute("XREADGROUP", "GROUP", "g", "c", "STREAMS", "mystream", ">")
    if ids_acked:
        engine.execute("XACK", "mystream", "g", *[f"{i}-0" for i in range(1, ids_acked + 1)])
    return engine


def test_approximate_acked_trimming_takes_whole_nodes_entry_by_entry():
    """redis/redis#14623: a node that ~ would take whole has its unreferenced entries
    removed; the walk stops at the first node it cannot take whole."""
    engine = acked_nodes(2)
    assert engine.execute("XTRIM", "mystream", "MINID", "~", "5-0", "ACKED") == 2
    assert [e[0] for e in engine.execute("XRANGE", "mystream", "-", "+")] == [b"3-0", b"4-0"]
    engine = acked_nodes(2)
    assert engine.execute("XTRIM", "mystream", "MINID", "~", "4-0", "ACKED") == 2
    assert engine.execute("XTRIM", "mystream", "MAXLEN", "~", "1", "ACKED") == 0
    engine = acked_nodes(3)                  # 4-0 keeps the second node alive
    assert engine.execute("XTRIM", "mystream", "MAXLEN", "~", "0", "ACKED") == 3
    assert engine.execute("XLEN", "mystream") == 1
    engine = acked_nodes(1)                  # exact: the first node not taken whole is
    engine.execute("XACK", "mystream", "g", "3-0")   # the last one looked at
    assert engine.execute("XTRIM", "mystream", "MAXLEN", "1", "ACKED") == 2
    assert [e[0] for e in engine.execute("XRANGE", "mystream", "-", "+")] == [b"2-0", b"4-0"]


def test_approximate_delref_trimming_cleans_the_pels():
    engine = acked_nodes(0)
    assert engine.execute("XTRIM", "mystream", "MINID", "~", "4-0", "DELREF") == 2
    assert [p[0] for p in engine.execute("XPENDING", "mystream", "g", "-", "+", 9)] == \
        [b"3-0", b"4-0"]


def test_policies_without_groups_trim_as_keepref(engine):
    for policy in ("KEEPREF", "DELREF", "ACKED"):
        engine.execute("DEL", "s")
        for i in range(1, 6):
            engine.execute("XADD", "s", f"{i}-0", "f", "v")
        assert engine.execute("XTRIM", "s", "MAXLEN", "2", policy) == 3
        engine.execute("XADD", "s", policy, "MAXLEN", "1", "*", "f", "v")
        assert engine.execute("XLEN", "s") == 1


# -- effects ------------------------------------------------------------------------------

POLICY_COMMANDS = [
    ("XADD", "s", "ACKED", "MAXLEN", "3", "*", "f", "v"),
    ("XADD", "s", "DELREF", "MAXLEN", "3", "*", "f", "v"),
    ("XTRIM", "s", "MAXLEN", "2", "ACKED"),
    ("XTRIM", "s", "MINID", "5-0", "DELREF"),
]


def policy_workload(engine: Engine, clock: ManualClock, rng: random.Random, steps: int) -> None:
    """A seeded run of every policy command among reads, acks and deletions."""
    for group in ("g1", "g2"):
        engine.execute("XGROUP", "CREATE", "s", group, "0", "MKSTREAM")
    for _ in range(steps):
        clock.advance(rng.choice([0, 1, 7]))
        group = rng.choice(["g1", "g2"])
        op = rng.random()
        entries = [e[0] for e in engine.execute("XRANGE", "s", "-", "+")]
        some = rng.sample(entries, min(len(entries), rng.randint(1, 3))) or [b"1-0"]
        policy = rng.choice(["KEEPREF", "DELREF", "ACKED"])
        if op < 0.3:
            trim = [rng.choice(["MAXLEN", "MINID"])]
            trim += [str(rng.randint(0, 8))] if trim[0] == "MAXLEN" else [rng.choice(entries or [b"0"])]
            engine.execute("XADD", "s", policy, *trim, "*", "f", str(rng.random()))
        elif op < 0.5:
            engine.execute("XREADGROUP", "GROUP", group, rng.choice(["a", "b"]), "COUNT",
                           rng.randint(1, 4), "STREAMS", "s", ">")
        elif op < 0.6:
            engine.execute("XACK", "s", group, *some)
        elif op < 0.7:
            engine.execute("XDELEX", "s", policy, "IDS", len(some), *some)
        elif op < 0.8:
            engine.execute("XACKDEL", "s", group, policy, "IDS", len(some), *some)
        elif op < 0.9:
            engine.execute("XTRIM", "s", "MAXLEN", str(rng.randint(0, 6)), policy)
        else:
            engine.execute("XDEL", "s", *some)


@pytest.mark.parametrize("seed", range(4))
def test_effects_replay_the_policy_commands(seed):
    clock = ManualClock(T0)
    engine = Engine(clock=clock)
    log = []
    engine.add_effect_listener(lambda db, effects: log.extend(effects))
    policy_workload(engine, clock, random.Random(seed), 400)
    fresh = Engine(clock=ManualClock(T0 + 3_600_000))
    for argv in log:
        fresh.execute(*argv)
    assert logged_state(fresh) == logged_state(engine)
    names = {argv[0] for argv in log}
    assert names <= {b"XADD", b"XTRIM", b"XDEL", b"XACK", b"XCLAIM", b"XGROUP"}, names
    # (XREADGROUP counts one change per stream served however many effects it logs)
    assert 0 < engine.dirty <= len(log)


def test_effects_of_xackdel_and_xdelex(engine):
    log = []
    engine.add_effect_listener(lambda db, effects: log.extend(effects))
    two_groups_reading(engine, ("1-0", "2-0", "3-0"))
    del log[:]
    engine.execute("XACKDEL", "mystream", "group1", "DELREF", "IDS", "2", "1-0", "9-0")
    assert log == [[b"XACK", b"mystream", b"group1", b"1-0"],
                   [b"XACK", b"mystream", b"group2", b"1-0"],
                   [b"XDEL", b"mystream", b"1-0"]]
    del log[:]
    assert engine.execute("XDELEX", "mystream", "ACKED", "IDS", "1", "2-0") == [2]
    assert log == []
    engine.execute("XDELEX", "mystream", "KEEPREF", "IDS", "1", "2-0")
    assert log == [[b"XDEL", b"mystream", b"2-0"]]


# -- the model ----------------------------------------------------------------------------

class StreamModel:
    """What the policies do, from the documentation: entries, and per group its last
    delivered ID and PEL (ID -> consumer). IDs are (ms, 0) with ms counting up."""

    def __init__(self) -> None:
        self.entries: list[int] = []
        self.last = 0
        self.groups: dict[str, dict] = {}

    def referenced(self, ms: int) -> bool:
        return any(ms > g["last"] or ms in g["pel"] for g in self.groups.values())

    def delete(self, ms: int, policy: str) -> int:
        if policy == "ACKED" and self.referenced(ms):
            return 2
        if policy == "DELREF":
            for g in self.groups.values():
                g["pel"].pop(ms, None)
        if ms in self.entries:
            self.entries.remove(ms)
            return 1
        return -1

    def trim(self, maxlen: int, policy: str) -> int:
        if not self.groups:
            policy = "KEEPREF"
        doomed = []
        remaining = len(self.entries)
        for ms in self.entries:
            if remaining <= maxlen:
                break
            if policy != "ACKED" or not self.referenced(ms):
                doomed.append(ms)
                remaining -= 1
        for ms in doomed:
            self.delete(ms, "DELREF" if policy == "DELREF" else "KEEPREF")
        return len(doomed)

    def xadd(self, maxlen: int | None, policy: str) -> None:
        self.last += 1
        self.entries.append(self.last)
        if maxlen is not None:
            self.trim(maxlen, policy)

    def xdelex(self, ids: list[int], policy: str) -> list[int]:
        return [self.delete(ms, policy) for ms in ids]

    def xackdel(self, group: str, ids: list[int], policy: str) -> list[int]:
        g = self.groups.get(group)
        out = []
        for ms in ids:
            if g is None or g["pel"].pop(ms, None) is None:
                out.append(-1)
            else:
                out.append(2 if self.delete(ms, policy) == 2 else 1)
        return out

    def xack(self, group: str, ids: list[int]) -> int:
        g = self.groups.get(group)
        return 0 if g is None else sum(g["pel"].pop(ms, None) is not None for ms in set(ids))

    def xreadgroup(self, group: str, consumer: str, count: int) -> list[int]:
        g = self.groups[group]
        new = [ms for ms in self.entries if ms > g["last"]][:count]
        for ms in new:
            g["pel"][ms] = consumer
        if new:
            g["last"] = new[-1]
        return new

    def pending(self, group: str) -> list[tuple[int, str]]:
        return sorted(self.groups[group]["pel"].items())


def ids_text(ids: list[int]) -> list[str]:
    return [f"{ms}-0" for ms in ids]


POLICIES = st.sampled_from(["KEEPREF", "DELREF", "ACKED"])
GROUP_NAMES = st.sampled_from(["g1", "g2", "g3"])
ID_LISTS = st.lists(st.integers(1, 8), min_size=1, max_size=4)
STEPS = st.lists(st.one_of(
    st.tuples(st.just("xadd"), st.one_of(st.none(), st.integers(0, 6)), POLICIES),
    st.tuples(st.just("xtrim"), st.integers(0, 6), POLICIES),
    st.tuples(st.just("xdelex"), ID_LISTS, POLICIES),
    st.tuples(st.just("xackdel"), GROUP_NAMES, ID_LISTS, POLICIES),
    st.tuples(st.just("xreadgroup"), GROUP_NAMES, st.sampled_from(["a", "b"]), st.integers(1, 3)),
    st.tuples(st.just("xack"), GROUP_NAMES, ID_LISTS),
    st.tuples(st.just("create"), GROUP_NAMES, st.integers(0, 8)),
    st.tuples(st.just("destroy"), GROUP_NAMES),
    st.tuples(st.just("setid"), GROUP_NAMES, st.integers(0, 8)),
), min_size=15, max_size=60)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
def test_reference_policies_follow_the_model(steps):
    engine = Engine()
    model = StreamModel()
    engine.execute("XADD", "s", "MAXLEN", "0", "0-1", "f", "v")  # the key, empty
    for group in ("g1", "g2"):                  # groups from the start (more may come)
        engine.execute("XGROUP", "CREATE", "s", group, "0")
        model.groups[group] = {"last": 0, "pel": {}}
    for step in steps:
        op = step[0]
        if op == "xadd":
            _, maxlen, policy = step
            trim = [] if maxlen is None else ["MAXLEN", str(maxlen)]
            model.xadd(maxlen, policy)
            assert engine.execute("XADD", "s", policy, *trim, f"{model.last}-0", "f", "v") == \
                f"{model.last}-0".encode()
        elif op == "xtrim":
            _, maxlen, policy = step
            assert engine.execute("XTRIM", "s", "MAXLEN", str(maxlen), policy) == \
                model.trim(maxlen, policy)
        elif op == "xdelex":
            _, ids, policy = step
            assert engine.execute("XDELEX", "s", policy, "IDS", len(ids), *ids_text(ids)) == \
                model.xdelex(ids, policy)
        elif op == "xackdel":
            _, group, ids, policy = step
            assert engine.execute("XACKDEL", "s", group, policy, "IDS", len(ids),
                                  *ids_text(ids)) == model.xackdel(group, ids, policy)
        elif op == "xreadgroup":
            _, group, consumer, count = step
            if group not in model.groups:
                continue
            reply = engine.execute("XREADGROUP", "GROUP", group, consumer, "COUNT", count,
                                   "STREAMS", "s", ">")
            got = [int(e[0].split(b"-")[0]) for e in reply[0][1]] if reply else []
            assert got == model.xreadgroup(group, consumer, count)
        elif op == "xack":
            _, group, ids = step
            assert engine.execute("XACK", "s", group, *ids_text(ids)) == model.xack(group, ids)
        elif op == "create":
            _, group, at = step
            if group in model.groups:
                continue
            at = min(at, model.last)
            engine.execute("XGROUP", "CREATE", "s", group, f"{at}-0")
            model.groups[group] = {"last": at, "pel": {}}
        elif op == "setid":
            _, group, at = step
            if group not in model.groups:
                continue
            at = min(at, model.last)
            engine.execute("XGROUP", "SETID", "s", group, f"{at}-0")
            model.groups[group]["last"] = at
        else:
            _, group = step
            assert engine.execute("XGROUP", "DESTROY", "s", group) == \
                int(model.groups.pop(group, None) is not None)
        assert [int(e[0].split(b"-")[0]) for e in engine.execute("XRANGE", "s", "-", "+")] == \
            model.entries
        for group in model.groups:
            pending = engine.execute("XPENDING", "s", group, "-", "+", 100)
            assert [(int(p[0].split(b"-")[0]), p[1].decode()) for p in pending] == \
                model.pending(group)


def test_redis_py_methods():
    """redis-py 8's xdelex / xackdel / ref_policy= arguments, through a client session."""
    from engine import EmbeddedRedis  # noqa: PLC0415

    r = EmbeddedRedis()
    for i in range(1, 5):
        r.xadd("s", {"f": "v"}, id=f"{i}-0")
    r.xgroup_create("s", "g", "0")
    r.xreadgroup("g", "c", {"s": ">"}, count=2)
    assert r.xdelex("s", "1-0", "3-0", ref_policy="ACKED") == [2, 2]
    assert r.xackdel("s", "g", "1-0", "3-0", ref_policy="ACKED") == [1, -1]
    assert r.xtrim("s", maxlen=1, approximate=False, ref_policy="DELREF") == 2
    assert r.xpending("s", "g")["pending"] == 0
    assert r.xadd("s", {"f": "v"}, id="5-0", maxlen=0, approximate=False,
                  ref_policy="ACKED") == b"5-0"
    assert r.xlen("s") == 2
    with pytest.raises(Exception, match="syntax error"):
        r.execute_command("XDELEX", "s", "KEEPREF", "ACKED", "IDS", 1, "1-0")


def test_xgroup_delconsumer_drops_its_references(engine):
    two_groups_reading(engine)
    engine.execute("XACK", "mystream", "group1", "1-0", "2-0")
    assert engine.execute("XDELEX", "mystream", "ACKED", "IDS", "1", "1-0") == [2]
    assert engine.execute("XGROUP", "DELCONSUMER", "mystream", "group2", "consumer2") == 2
    assert engine.execute("XDELEX", "mystream", "ACKED", "IDS", "1", "1-0") == [1]


def test_watch_sees_deletions_only():
    """A deletion changes the key for WATCH; a reply of 2 or -1 changed nothing."""
    import redis  # noqa: PLC0415

    from engine import EmbeddedRedis  # noqa: PLC0415

    r = EmbeddedRedis()
    two = EmbeddedRedis(engine=r.engine)
    for i in (1, 2):
        r.xadd("s", {"f": "v"}, id=f"{i}-0")
    r.xgroup_create("s", "g", "0")
    r.xreadgroup("g", "c", {"s": ">"})
    for command, aborted in ((("XDELEX", "s", "ACKED", "IDS", 1, "1-0"), False),
                             (("XACKDEL", "s", "g", "ACKED", "IDS", 1, "9-0"), False),
                             (("XDELEX", "s", "IDS", 1, "1-0"), True)):
        with r.pipeline() as pipe:
            pipe.watch("s")
            two.execute_command(*command)
            pipe.multi()
            pipe.xlen("s")
            if aborted:
                with pytest.raises(redis.WatchError):
                    pipe.execute()
            else:
                assert pipe.execute() == [r.xlen("s")]
