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



def every_command_on(key: str, members: list[str]) -> list[tuple]:
    """Each set command on `key` holding `members` (an encoding's shape), beside a
    small intset `o` and string set `w`; SPOP only with a count beyond the size (a
    known outcome), SRANDMEMBER's reply compared by count."""
    some = members[::7]
    return [
        ("DEL", key, "o", "w", "d"), ("SADD", key, *members), ("SADD", "o", 1, 2, 3, members[0]),
        ("SADD", "w", "a", members[1], "zz"), ("SCARD", key), ("SMEMBERS", key),
        ("SISMEMBER", key, members[0]), ("SISMEMBER", key, "absent"), ("SISMEMBER", key, "-0"),
        ("SMISMEMBER", key, *some, "absent", "007"), ("SRANDMEMBER", key, 5),
        ("SRANDMEMBER", key, -5), ("SINTER", key, "o"), ("SINTER", key, "w", "nokey"),
        ("SUNION", key, "o", "w"), ("SDIFF", key, "o", "w"), ("SDIFF", "o", key),
        ("SINTERCARD", 2, key, "w"), ("SINTERCARD", 1, key, "LIMIT", 3),
        ("SINTERSTORE", "d", key, "o"), ("SMEMBERS", "d"), ("SUNIONSTORE", "d", key, "w"),
        ("SCARD", "d"), ("SDIFFSTORE", "d", key, "o"), ("SCARD", "d"),
        ("SMOVE", key, "o", members[2]), ("SMOVE", key, "nokey2", members[3]),
        ("SMEMBERS", "nokey2"), ("SMOVE", key, key, members[4]), ("SMOVE", key, "o", "absent"),
        ("SORT", key, "ALPHA"), ("SORT", key, "ALPHA", "DESC", "LIMIT", 1, 3),
        ("COPY", key, "c"), ("SMEMBERS", "c"), ("SREM", key, *some, "absent"),
        ("SCARD", key), ("SMEMBERS", key), ("SPOP", "c", 100000), ("EXISTS", "c"),
        ("DEL", "c", "nokey2"),
    ]


INTS = [str(i * 37 - 500) for i in range(40)]
STRINGS = [f"m{i}" for i in range(40)]
BIG = [f"member:{i}" for i in range(300)]
LONG = STRINGS[:10] + ["x" * 70]
SEQUENCES.update({
    "every command on an intset": every_command_on("s", INTS),
    "every command on a big intset": every_command_on("s", [str(i) for i in range(600)]),
    "every command on a listpack": every_command_on("s", STRINGS),
    "every command on a hashtable": every_command_on("s", BIG),
    "every command on a set with a long member": every_command_on("s", LONG),
})

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


def test_encodings_follow_redis_7_2():
    """OBJECT ENCODING as Redis 7.2+ answers for the same history (7.0 has no listpack
    sets: DELIBERATE_DIFFERENCES in tests/differential.py)."""
    e = Engine()

    def enc(key):
        return e.execute("OBJECT", "ENCODING", key)

    e.execute("SADD", "i", 1, 2, 3)
    assert enc("i") == b"intset"
    e.execute("SADD", "i", "a")
    assert enc("i") == b"listpack"
    e.execute("SREM", "i", "a")
    assert enc("i") == b"listpack"                      # never back
    e.execute("SADD", "n", *range(512))
    assert enc("n") == b"intset"
    e.execute("SADD", "n", 512)
    assert enc("n") == b"hashtable"                     # an intset past its limit
    e.execute("SADD", "h", *range(513))                 # more members than an intset takes
    assert enc("h") == b"hashtable"
    e.execute("SADD", "l", *(f"m{i}" for i in range(128)))
    assert enc("l") == b"listpack"
    e.execute("SADD", "l", "one-more")
    assert enc("l") == b"hashtable"
    e.execute("SADD", "m", *(f"m{i}" for i in range(129)))
    assert enc("m") == b"hashtable"
    e.execute("SADD", "v", "x" * 64)
    assert enc("v") == b"listpack"
    e.execute("SADD", "w", "x" * 65)
    assert enc("w") == b"hashtable"
    e.execute("SADD", "big-intset", *range(200))
    e.execute("SADD", "big-intset", "a")                # too many for a listpack
    assert enc("big-intset") == b"hashtable"
    e.execute("SMOVE", "w", "moved", "x" * 65)
    assert enc("moved") == b"hashtable"
    e.execute("SMOVE", "i", "moved-int", 1)
    assert enc("moved-int") == b"intset"
    e.execute("SINTERSTORE", "st", "l", "m")
    assert enc("st") == b"listpack"
    e.execute("SUNIONSTORE", "st", "n")
    assert enc("st") == b"hashtable"
    e.execute("COPY", "i", "ci")
    assert enc("ci") == b"listpack"
    e.execute("RESTORE", "ri", 0, e.execute("DUMP", "n"))
    assert enc("ri") == b"hashtable"
