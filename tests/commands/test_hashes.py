"""Hash commands against the 7.0 oracle: hand-written sequences covering every
command's options and errors, seeded random sequences (tests/collection_generator.py),
and engine-only checks (HSCAN NOVALUES of 7.4, random picks, effects)."""
from __future__ import annotations


import pytest

from collection_generator import oracle_tests
from differential import run_both
from test_differential import script
from engine import Engine, ResponseError


SEQUENCES = {
    "set_get": script("""
        HSET h a 1 b 2
        HSET h a 10 c 3
        HSET h a
        HSET h
        HMSET h d 4 e 5
        HMSET h d
        HSETNX h a 99
        HSETNX h z 26
        HSETNX nokey f v
        HGET h a
        HGET h missing
        HGET nokey a
        HMGET h a missing z
        HMGET nokey a b
        HGETALL h
        HGETALL nokey
        HKEYS h
        HVALS h
        HKEYS nokey
        HLEN h
        HLEN nokey
        HEXISTS h a
        HEXISTS h missing
        HEXISTS nokey a
        HSTRLEN h a
        HSTRLEN h missing
        HSTRLEN nokey a
        HDEL h a missing a
        HDEL h
        HDEL nokey a
        HDEL h b c d e z
        EXISTS h
        HDEL nokey2 a
        SET str v
        HSET str a 1
        HGET str a
        HGETALL str
        HLEN str
        HDEL str a
        TYPE nokey
    """),
    "counters": script("""
        HINCRBY h n 5
        HINCRBY h n -7
        HINCRBY h n x
        HINCRBY h n 9223372036854775807
        HINCRBY h n 9223372036854775806
        HINCRBY h n 1
        HSET h s abc
        HINCRBY h s 1
        HINCRBYFLOAT h s 1
        HINCRBYFLOAT h f 10.5
        HINCRBYFLOAT h f 0.1
        HINCRBYFLOAT h f -5.0e3
        HINCRBYFLOAT h g 3.0e-5
        HINCRBYFLOAT h g -0.00003
        HINCRBYFLOAT h f x
        HINCRBYFLOAT h f inf
        HINCRBYFLOAT h f nan
        HINCRBYFLOAT h f ""
        HINCRBYFLOAT h big 1e300
        HINCRBYFLOAT h big 1e308
        HSET h huge 1.7e308
        HINCRBYFLOAT h huge 1.7e308
        HINCRBY h f 1
        HGETALL h
        SET str v
        HINCRBY str f 1
        HINCRBYFLOAT str f 1
    """),
    "scan_and_random": script("""
        HSET h a 1 b 2 c 3 ab 4
        HSCAN h 0
        HSCAN h 0 MATCH a*
        HSCAN h 0 COUNT 1
        HSCAN h 0 COUNT 0
        HSCAN h 0 COUNT x
        HSCAN h 0 MATCH
        HSCAN h 0 FOO
        HSCAN h x
        HSCAN nokey 0
        HSCAN nokey 0 FOO
        HSCAN nokey x
        HRANDFIELD h 10
        HRANDFIELD h 10 WITHVALUES
        HRANDFIELD h 2
        HRANDFIELD h -5
        HRANDFIELD h -5 WITHVALUES
        HRANDFIELD h 0
        HRANDFIELD h 0 WITHVALUES
        HRANDFIELD h 1 x
        HRANDFIELD h x
        HRANDFIELD h 1 WITHVALUES x
        HRANDFIELD h -9223372036854775808
        HRANDFIELD h -4611686018427387904 WITHVALUES
        HRANDFIELD h 9223372036854775807 WITHVALUES
        HRANDFIELD nokey
        HRANDFIELD nokey 3
        HRANDFIELD nokey 3 WITHVALUES
        HRANDFIELD nokey -9223372036854775808
        SET str v
        HRANDFIELD str
        HSCAN str 0
    """),
}



def every_command_on(key: str, pairs: list[tuple[str, str]]) -> list[tuple]:
    """Each hash command on `key` holding `pairs` (an encoding's shape). HGETALL,
    HKEYS and HVALS keep the insertion order of a listpack, so the oracle's replies
    match ours as they are for small hashes; HRANDFIELD's reply is compared by count."""
    flat = [x for pair in pairs for x in pair]
    f0, f1, f2 = pairs[0][0], pairs[1][0], pairs[2][0]
    return [
        ("DEL", key, "c"), ("HSET", key, *flat), ("HLEN", key), ("HGETALL", key),
        ("HKEYS", key), ("HVALS", key), ("HGET", key, f0), ("HGET", key, "absent"),
        ("HMGET", key, f0, "absent", f1), ("HEXISTS", key, f1), ("HEXISTS", key, "absent"),
        ("HSTRLEN", key, f2), ("HSTRLEN", key, "absent"), ("HSETNX", key, f0, "no"),
        ("HSETNX", key, "new", "yes"), ("HSET", key, f1, "changed", "n2", "12"),
        ("HMSET", key, f2, "-7", "n3", "1.5"), ("HINCRBY", key, f2, 10),
        ("HINCRBY", key, "n4", -3), ("HINCRBY", key, f1, 1),
        ("HINCRBYFLOAT", key, "n3", "2.25"), ("HINCRBYFLOAT", key, "n5", "1e3"),
        ("HINCRBYFLOAT", key, f1, 1), ("HRANDFIELD", key, 3), ("HRANDFIELD", key, -4),
        ("HRANDFIELD", key, 2, "WITHVALUES"), ("HRANDFIELD", key, 100000),
        ("SORT", "idx", "BY", f"{key}->*"),
        ("COPY", key, "c"), ("HGETALL", "c"), ("HDEL", key, f0, "absent", "new"),
        ("HLEN", key), ("HGETALL", key), ("HDEL", "c", *[p[0] for p in pairs],
                                            "new", "n2", "n3", "n4", "n5"),
        ("EXISTS", "c"),
    ]


SMALL = [(f"f{i}", f"v{i}") for i in range(20)]
NUMERIC = [(str(i), str(i * 3)) for i in range(20)]
BIG = [(f"field:{i}", f"value:{i}") for i in range(300)]
LONG = SMALL[:5] + [("long", "x" * 70)]
SEQUENCES.update({
    "every command on a listpack": [("RPUSH", "idx", "f1", "f2", "f3")]
                                   + every_command_on("h", SMALL),
    "every command on a numeric listpack": [("RPUSH", "idx", "1", "2")]
                                           + every_command_on("h", NUMERIC),
    "every command on a hashtable": [("RPUSH", "idx", "field:1", "x")]
                                    + every_command_on("h", BIG),
    "every command on a hash with a long value": [("RPUSH", "idx", "f1")]
                                                 + every_command_on("h", LONG),
})

test_handwritten_sequence, test_random_sequence = oracle_tests(SEQUENCES, "hash", "hashes")


def test_big_hash_replies_agree(engine, oracle):
    """A hash past 128 fields (a hashtable in Redis): same content, any order."""
    fields = [x for i in range(300) for x in (f"f{i}", f"v{i}")]
    run_both(engine, oracle, [("HSET", "h", *fields), ("HGETALL", "h"), ("HLEN", "h"),
                              ("HDEL", "h", "f1", "f2"), ("HKEYS", "h"), ("HVALS", "h")])


# -- engine-only -----------------------------------------------------------------------

def test_hscan_novalues_as_newest_redis():
    e = Engine()
    e.execute("HSET", "h", "a", "1", "b", "2")
    assert e.execute("HSCAN", "h", 0, "NOVALUES") == [b"0", [b"a", b"b"]]
    assert e.execute("HSCAN", "h", 0, "MATCH", "b", "NOVALUES") == [b"0", [b"b"]]


def test_random_picks_come_from_the_hash():
    e = Engine()
    e.execute("HSET", "h", "a", "1", "b", "2", "c", "3")
    fields = {b"a": b"1", b"b": b"2", b"c": b"3"}
    assert e.execute("HRANDFIELD", "h") in fields
    picked = e.execute("HRANDFIELD", "h", 2, "WITHVALUES")
    assert len(picked) == 4 and len(set(picked[::2])) == 2
    assert all(fields[f] == v for f, v in zip(picked[::2], picked[1::2]))
    repeated = e.execute("HRANDFIELD", "h", -10)
    assert len(repeated) == 10 and set(repeated) <= set(fields)
    assert sorted(e.execute("HRANDFIELD", "h", 10)) == sorted(fields)


def test_hincrbyfloat_replays_as_hset():
    e = Engine()
    logged = []
    e.add_effect_listener(lambda db, effects: logged.extend(effects))
    e.execute("HINCRBYFLOAT", "h", "f", "10.5")
    e.execute("HINCRBYFLOAT", "h", "f", "0.1")
    e.execute("HMSET", "h", "g", "1")
    assert logged == [[b"HSET", b"h", b"f", b"10.5"], [b"HSET", b"h", b"f", b"10.6"],
                      [b"HSET", b"h", b"g", b"1"]]
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        e.execute("LPUSH", "h", "x")


def test_encodings_follow_redis():
    """OBJECT ENCODING as Redis answers for the same history (the same in 7.0, whose
    compiled-in hash-max-listpack-entries is 512, as the newest's)."""
    e = Engine()

    def enc(key):
        return e.execute("OBJECT", "ENCODING", key)

    e.execute("HSET", "h", *[x for i in range(512) for x in (f"f{i}", i)])
    assert enc("h") == b"listpack"
    e.execute("HSET", "h", "one", "more")
    assert enc("h") == b"hashtable"
    e.execute("HDEL", "h", "one", *[f"f{i}" for i in range(100)])
    assert enc("h") == b"hashtable"                     # never back
    e.execute("HSET", "v", "f", "x" * 64)
    assert enc("v") == b"listpack"
    e.execute("HSETNX", "v", "g", "x" * 65)
    assert enc("v") == b"hashtable"
    e.execute("HSET", "k", "x" * 65, "v")
    assert enc("k") == b"hashtable"
    e.execute("HINCRBYFLOAT", "n", "f", "1.5")
    assert enc("n") == b"listpack"
    e.execute("COPY", "h", "c")
    assert enc("c") == b"hashtable"
    assert e.execute("HGETALL", "n") == [b"f", b"1.5"]
