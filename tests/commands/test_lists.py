"""List commands against the 7.0 oracle: hand-written sequences covering every
command's options and errors, seeded random sequences (tests/collection_generator.py),
and engine-only checks of what 7.0 cannot judge (newest-Redis behaviour, effects,
keyspace events)."""
from __future__ import annotations

import time

import pytest

from collection_generator import oracle_tests
from test_differential import script
from engine import EmbeddedRedis, Engine, ResponseError


SEQUENCES = {
    "push_pop": script("""
        LPUSH l a b c
        RPUSH l d e
        LRANGE l 0 -1
        LPUSHX l x
        RPUSHX l y z
        LPUSHX nokey x
        RPUSHX nokey x
        LLEN l
        LLEN nokey
        LPOP l
        RPOP l
        LPOP l 2
        RPOP l 0
        RPOP l 100
        EXISTS l
        LPOP l
        LPOP l 3
        RPOP nokey 0
        LPOP l -1
        LPOP l x
        LPOP l 1 2
        LPUSH
        LPUSH l
        RPUSH l
        SET str v
        LPUSH str a
        LPOP str
        LPOP str 0
        LLEN str
        TYPE str
        RPUSH l a
        TYPE l
    """),
    "read_and_edit": script("""
        RPUSH l a b c a b c a
        LRANGE l 1 3
        LRANGE l -3 -1
        LRANGE l -100 100
        LRANGE l 5 2
        LRANGE l 7 10
        LRANGE l 0 x
        LRANGE nokey 0 -1
        LINDEX l 0
        LINDEX l -1
        LINDEX l 7
        LINDEX l -8
        LINDEX l x
        LINDEX nokey x
        LSET l 1 B
        LSET l -1 Z
        LSET l 7 q
        LSET l x q
        LSET nokey 0 q
        LRANGE l 0 -1
        LINSERT l BEFORE a first
        LINSERT l after Z last
        LINSERT l BEFORE missing v
        LINSERT l middle a v
        LINSERT nokey BEFORE a v
        LRANGE l 0 -1
        LREM l 1 a
        LREM l -1 a
        LREM l 0 c
        LREM l 0 nothing
        LREM l x a
        LREM nokey 1 a
        LRANGE l 0 -1
        LTRIM l 1 -2
        LRANGE l 0 -1
        LTRIM l 5 1
        EXISTS l
        LTRIM nokey 0 1
        LTRIM l x 1
        RPUSH t 1 2 3
        LTRIM t 0 100
        LTRIM t -2 -1
        LRANGE t 0 -1
    """),
    "lpos": script("""
        RPUSH l a b c a b c a x
        LPOS l a
        LPOS l a RANK 2
        LPOS l a RANK -1
        LPOS l a RANK -3
        LPOS l a RANK 5
        LPOS l a COUNT 0
        LPOS l a COUNT 2
        LPOS l a COUNT 2 RANK -1
        LPOS l a COUNT 0 MAXLEN 4
        LPOS l a RANK -1 MAXLEN 1
        LPOS l a RANK -1 COUNT 2 MAXLEN 3
        LPOS l nothing
        LPOS l nothing COUNT 1
        LPOS nokey a
        LPOS nokey a COUNT 3
        LPOS l a RANK 0
        LPOS l a RANK x
        LPOS l a COUNT -1
        LPOS l a COUNT x
        LPOS l a MAXLEN -1
        LPOS l a MAXLEN x
        LPOS l a FOO
        LPOS l a RANK
        LPOS nokey a RANK 0
        LPOS l a RANK 9223372036854775807
    """),
    "move": script("""
        RPUSH a 1 2 3
        LMOVE a b LEFT RIGHT
        LMOVE a b right left
        LRANGE a 0 -1
        LRANGE b 0 -1
        LMOVE a a LEFT RIGHT
        LRANGE a 0 -1
        LMOVE a b LEFT RIGHT
        EXISTS a
        LMOVE a b LEFT RIGHT
        LMOVE b b RIGHT LEFT
        LRANGE b 0 -1
        LMOVE b c UP LEFT
        LMOVE b c LEFT DOWN
        SET str v
        LMOVE b str LEFT LEFT
        LMOVE str b LEFT LEFT
        LMOVE nokey str LEFT LEFT
        LRANGE b 0 -1
        RPOPLPUSH b c
        RPOPLPUSH c c
        RPOPLPUSH nokey c
        RPOPLPUSH b str
        LRANGE c 0 -1
        RPUSH one x
        RPOPLPUSH one one
        LRANGE one 0 -1
    """),
    "mpop": script("""
        RPUSH a 1 2 3
        RPUSH b 4 5
        LMPOP 2 nokey a LEFT
        LMPOP 2 nokey a RIGHT COUNT 5
        LMPOP 2 a b right count 1
        LMPOP 1 b LEFT COUNT 10
        LMPOP 2 a b LEFT
        LMPOP 0 a LEFT
        LMPOP -1 a LEFT
        LMPOP x a LEFT
        LMPOP 2 a LEFT
        LMPOP 3 a b
        LMPOP 1 a MIDDLE
        LMPOP 1 a LEFT COUNT 0
        LMPOP 1 a LEFT COUNT -1
        LMPOP 1 a LEFT COUNT x
        LMPOP 1 a LEFT COUNT 1 COUNT 2
        LMPOP 1 a LEFT COUNT
        LMPOP 1 a LEFT FOO
        SET str v
        LMPOP 2 str a LEFT
        RPUSH a 9
        LMPOP 2 a str LEFT
    """),
    "blocking_without_waiting": script("""
        RPUSH a 1 2
        RPUSH b 3
        BLPOP nokey a 0
        BRPOP a b 0.5
        BRPOP a b 1e-3
        RPUSH b 7 8
        BLPOP b a 0
        BLPOP b 0
        BLPOP a x
        BLPOP a -1
        BLPOP a inf
        BLPOP a 1e100
        BLPOP a ""
        BLPOP a
        SET str v
        RPUSH c 1
        BLPOP str c 0
        BLPOP c str 0
        RPUSH c 1 2 3
        BLMOVE c d LEFT RIGHT 0
        BLMOVE c d LEFT MIDDLE 0
        BLMOVE c d LEFT RIGHT x
        BLMOVE c str LEFT RIGHT 0
        BRPOPLPUSH c d 0
        BRPOPLPUSH c d x
        BRPOPLPUSH c d -1
        BLMPOP 0 2 nokey d RIGHT COUNT 5
        BLMPOP x 1 d LEFT
        BLMPOP -1 1 d LEFT
        BLMPOP 0 0 d LEFT
        BLMPOP 0 1 d LEFT COUNT 0
        BLMPOP 0 1 d LEFT COUNT 1 COUNT 2
        BLMPOP 0 1 d
        LRANGE c 0 -1
        LRANGE d 0 -1
        BLPOP nokey 0.01
        BLMOVE nokey d LEFT LEFT 0.01
        BRPOPLPUSH nokey d 0.01
        BLMPOP 0.01 1 nokey LEFT
    """),
}


test_handwritten_sequence, test_random_sequence = oracle_tests(SEQUENCES, "list", "lists")
test_random_sequence = pytest.mark.slow(test_random_sequence)      # ~15 s


def test_blocking_commands_inside_multi_answer_nil(redis_server):
    """Inside MULTI nothing blocks: BLPOP & co. answer nil at once (BLMOVE a null bulk,
    the others a null array), a push queued earlier serves a later pop."""
    import redis
    host, port = redis_server

    def run(client):
        client.flushall()
        pipe = client.pipeline(transaction=True)
        pipe.blpop(["nokey"], 0)
        pipe.blmove("nokey", "x", 0, "LEFT", "LEFT")
        pipe.execute_command("BLMPOP", 0, 1, "nokey", "LEFT")
        pipe.rpush("nokey", "v")
        pipe.blpop(["nokey"], 0)
        return pipe.execute()

    ours = [list(r) if isinstance(r, tuple) else r for r in run(EmbeddedRedis())]
    theirs = [list(r) if isinstance(r, tuple) else r
              for r in run(redis.Redis(host=host, port=port))]
    assert ours == theirs == [None, None, None, 1, [b"nokey", b"v"]]


# -- engine-only: newest behaviour, effects, events ---------------------------------------

def effects_of(engine: Engine, *args) -> list:
    """The effects one command reports (what the AOF gets)."""
    logged = []
    engine.add_effect_listener(lambda db, effects: logged.extend(effects))
    try:
        engine.execute(*args)
    finally:
        engine.effect_listeners.clear()
    return logged


def test_lpos_rank_is_bounded_as_newest_redis():
    e = Engine()
    e.execute("RPUSH", "l", "a")
    with pytest.raises(ResponseError, match="must between -9223372036854775807"):
        e.execute("LPOS", "l", "a", "RANK", "-9223372036854775808")


def test_effects_replay_the_outcome():
    e = Engine()
    e.execute("RPUSH", "l", "a", "b", "c")
    assert effects_of(e, "BLPOP", "nokey", "l", 0) == [[b"LPOP", b"l"]]
    assert effects_of(e, "LMPOP", 1, "l", "RIGHT", "COUNT", 10) == [[b"RPOP", b"l", b"2"]]
    e.execute("RPUSH", "l", "a", "b")
    assert effects_of(e, "BLMOVE", "l", "m", "left", "right", 0) == \
        [[b"LMOVE", b"l", b"m", b"LEFT", b"RIGHT"]]
    assert effects_of(e, "BRPOPLPUSH", "l", "m", 0) == [[b"RPOPLPUSH", b"l", b"m"]]
    assert effects_of(e, "LSET", "m", -1, "z") == [[b"LSET", b"m", b"1", b"z"]]
    assert effects_of(e, "LTRIM", "m", 0, -1) == []          # nothing removed
    assert effects_of(e, "LREM", "m", 0, "nothing") == []
    assert effects_of(e, "BLPOP", "nokey", 0) == []


SCRIPT_BLOCKING = [(("BLPOP", "k", 0), [b"k", b"a"]), (("BRPOP", "k", 0), [b"k", b"b"]),
                   (("BLMOVE", "k", "d", "LEFT", "RIGHT", 0), b"a"),
                   (("BRPOPLPUSH", "k", "d", 0), b"b")]


def test_blocking_commands_in_scripts(redis_server):
    """BLMPOP answers nil at once (as LMPOP) on both; BLPOP, BRPOP, BLMOVE and
    BRPOPLPUSH too here, as since Redis 7.2 (no noscript flag), where 7.0 refuses them."""
    import redis
    host, port = redis_server
    ours, theirs = EmbeddedRedis(), redis.Redis(host=host, port=port)
    for client in (ours, theirs):
        client.flushall()
        assert client.eval("return redis.call('BLMPOP', 0, 1, 'nokey', 'LEFT')", 0) is None
    for command, served in SCRIPT_BLOCKING:
        body = "return redis.call(" + ", ".join(f"'{a}'" for a in command) + ")"
        with pytest.raises(redis.ResponseError, match="not allowed from script"):
            theirs.eval(body, 0)
        began = time.monotonic()
        assert ours.eval(body, 0) is None
        ours.rpush("k", "a", "b")
        assert ours.eval(body, 0) == served
        assert time.monotonic() - began < 1
        ours.delete("k", "d")


def test_memory_follows_the_list():
    e = Engine()
    base = e.used_memory()
    e.execute("RPUSH", "l", *[b"x" * 100] * 1000)
    grown = e.used_memory() - base
    assert grown > 100_000
    e.execute("LTRIM", "l", 0, 9)
    assert e.used_memory() - base < grown / 10
    e.execute("DEL", "l")
    assert e.used_memory() == base
