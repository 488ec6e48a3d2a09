"""Set commands against the 7.0 oracle: hand-written sequences covering every
command's options and errors, seeded random sequences (tests/collection_generator.py),
and engine-only checks (random picks, SPOP's effects, encodings)."""
from __future__ import annotations


import pytest

from collection_generator import SEEDS, generate, oracle_tests
from differential import run_both
from test_differential import script
from engine import Engine


SEQUENCES = {
    "members": script("""
        SADD s a b c a
        SADD s c d
        SADD s
        SMEMBERS s
        SMEMBERS nokey
        SISMEMBER s a
        SISMEMBER s z
        SISMEMBER nokey a
        SMISMEMBER s a z b
        SMISMEMBER nokey a
        SMISMEMBER s
        SCARD s
        SCARD nokey
        SREM s a z a
        SREM nokey a
        SREM s b c d
        EXISTS s
        SADD n 1 2 3 -5 10
        SMEMBERS n
        SADD n x
        SMEMBERS n
        SET str v
        SADD str a
        SMEMBERS str
        SISMEMBER str a
        SCARD str
        SREM str a
    """),
    "pop_random_move": script("""
        SADD s a b c
        SPOP s 0
        SPOP s 100
        EXISTS s
        SPOP s
        SPOP s 3
        SPOP nokey
        SPOP nokey 2
        SPOP nokey 0
        SADD one x
        SPOP one
        EXISTS one
        SPOP s -1
        SPOP s x
        SPOP s 1 2
        SADD s a b c
        SRANDMEMBER s 10
        SRANDMEMBER s 2
        SRANDMEMBER s -5
        SRANDMEMBER s 0
        SRANDMEMBER s x
        SRANDMEMBER s 1 2
        SRANDMEMBER s -9223372036854775808
        SRANDMEMBER nokey
        SRANDMEMBER nokey 3
        SRANDMEMBER nokey x
        SMOVE s t a
        SMOVE s t a
        SMOVE s t b
        SMOVE s s c
        SMOVE s s z
        SMOVE t s a
        SMEMBERS s
        SMEMBERS t
        SMOVE s t c
        EXISTS s
        SET str v
        SMOVE t str a
        SMOVE str t a
        SMOVE nokey str a
        SMEMBERS t
    """),
    "algebra": script("""
        SADD a 1 2 3 4
        SADD b 3 4 5
        SADD c 4 x
        SINTER a b
        SINTER a b c
        SINTER a nokey
        SUNION a b c nokey
        SDIFF a b c
        SDIFF nokey a
        SDIFF a
        SINTERSTORE d a b
        SMEMBERS d
        SUNIONSTORE d a c
        SMEMBERS d
        SDIFFSTORE d a b c
        SMEMBERS d
        SINTERSTORE d a nokey
        EXISTS d
        SINTERSTORE d2 a nokey
        SET str v
        SINTER a str
        SINTER nokey str
        SUNION a str
        SDIFF str a
        SDIFF a str
        SDIFF nokey str
        SUNIONSTORE str a
        TYPE str
        SMEMBERS str
        SINTERSTORE x str2 a
        SINTERCARD 2 a b
        SINTERCARD 3 a b c
        SINTERCARD 2 a b LIMIT 1
        SINTERCARD 2 a b LIMIT 0
        SINTERCARD 2 a b LIMIT 5
        SINTERCARD 1 nokey
        SINTERCARD 0 a
        SINTERCARD x a
        SINTERCARD 3 a b
        SINTERCARD 1 a LIMIT -1
        SINTERCARD 1 a LIMIT x
        SINTERCARD 1 a LIMIT
        SINTERCARD 1 a FOO
        SINTERCARD 1 a LIMIT 1 LIMIT 2
        SET str2 v
        SINTERCARD 2 a str2
    """),
    "scan": script("""
        SADD s a b c ab 1
        SSCAN s 0
        SSCAN s 0 MATCH a*
        SSCAN s 0 COUNT 100
        SSCAN s 0 COUNT 0
        SSCAN s 0 NOVALUES
        SSCAN s x
        SSCAN nokey 0 FOO
        SSCAN nokey x
        SADD n 3 1 2
        SSCAN n 0
    """),
}


test_handwritten_sequence, test_random_sequence = oracle_tests(SEQUENCES, "set", "sets")


@pytest.mark.parametrize("seed", SEEDS)
def test_random_mixed_sequence(seed, engine, oracle):
    """Lists, hashes and sets on the same keys (WRONGTYPE, removals, RENAME)."""
    run_both(engine, oracle, generate(1000 + seed, 400), label=f"mixed seed={seed}")


def test_big_set_replies_agree(engine, oracle):
    members = [str(i) for i in range(600)] + [f"m{i}" for i in range(200)]
    run_both(engine, oracle, [("SADD", "s", *members), ("SCARD", "s"), ("SMEMBERS", "s"),
                              ("SADD", "t", *members[::3]), ("SINTER", "s", "t"),
                              ("SDIFF", "s", "t"), ("SINTERCARD", 2, "s", "t", "LIMIT", 50),
                              ("SREM", "s", *members[:700]), ("SMEMBERS", "s")])


# -- engine-only -----------------------------------------------------------------------

def test_spop_replays_as_srem_or_del():
    e = Engine()
    logged = []
    e.add_effect_listener(lambda db, effects: logged.extend(effects))
    e.execute("SADD", "s", "a", "b", "c")
    popped = e.execute("SPOP", "s")
    assert logged[-1] == [b"SREM", b"s", popped]
    two = e.execute("SPOP", "s", 1)
    assert logged[-1] == [b"SREM", b"s", *two]
    e.execute("SPOP", "s", 5)
    assert logged[-1] == [b"DEL", b"s"] and e.execute("EXISTS", "s") == 0


def test_random_members_come_from_the_set():
    e = Engine()
    e.execute("SADD", "s", "a", "b", "c")
    assert e.execute("SRANDMEMBER", "s") in {b"a", b"b", b"c"}
    two = e.execute("SRANDMEMBER", "s", 2)
    assert len(set(two)) == 2 and set(two) <= {b"a", b"b", b"c"}
    assert len(e.execute("SRANDMEMBER", "s", -7)) == 7
