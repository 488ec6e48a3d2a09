"""Sorted sets (engine/commands/sorted_sets.pyx): every command's options and errors
compared with the 7.0 oracle (RESP2 through Engine.execute, RESP3 through the embedded
client), a generated random sequence, the engine-only newer behaviour (ZRANK
WITHSCORE), the random and scanning commands' properties, and the effects replaying
into the same state."""
from __future__ import annotations

import random

import pytest
import redis

from differential import run_both
from engine import Engine
from engine.api.client import EmbeddedRedis
from engine.core.errors import ResponseError
from engine.commands.table import COMMANDS
from engine.core.sorted_set import SortedSetValue
from engine.core.value_types import VALUE_TYPES
from servers import SluiceServer
from test_differential import script
from test_command_table import NEWER_FLAGS

SCORES = ["0", "1", "-1", "2.5", "1e3", "-0", "0.1", "inf", "-inf", "+inf", "3", "7"]
MEMBERS = ["a", "b", "c", "d", "e", "f", "g", "h"]
BOUNDS = ["-inf", "+inf", "0", "1", "(1", "2.5", "(2.5", "3", "(7", "1e3", "-1", "x", "(", ""]
LEX = ["-", "+", "[a", "(a", "[c", "(d", "[h", "(z", "a", "[", "(", "+x"]

# -- hand-written sequences ---------------------------------------------------------------

ADD_AND_SCORES = script("""
ZADD z 1 a 2 b 3 c
ZADD z 1.1 d -inf e +inf f 5e-324 g 1e-310 h
ZSCORE z d
ZSCORE z e
ZSCORE z nope
ZSCORE nokey a
ZMSCORE z a nope f
ZMSCORE nokey a b
ZRANGE z 0 -1 WITHSCORES
ZADD z nan x
ZADD z abc x
ZADD z "1 " x
ZADD z " 1" x
ZADD z "" x
ZADD z 1e400 x
ZADD z 0x10 x
ZADD z 1 x 2
ZADD z NX XX 1 a
ZADD z GT LT 1 a
ZADD z NX GT 1 a
ZADD z NX LT 1 a
ZADD z INCR 1 a 2 b
ZADD z
ZADD z NX
ZADD z INCR 5 a
ZADD z XX INCR 5 nope
ZADD z NX INCR 5 a
ZADD z GT INCR -5 a
ZADD z LT INCR -5 a
ZADD z GT 1 a
ZADD z LT 100 a
ZADD z GT CH 100 a 0 b 4 new
ZADD z CH 10 a 20 b 30 new2
ZADD z XX CH 1 a 1 brandnew
ZADD z nx ch incr 1 n
ZADD nokey XX 1 a
EXISTS nokey
ZADD nokey XX INCR 1 a
ZADD z INCR -inf f
ZINCRBY z 1.5 b
ZINCRBY z abc b
ZINCRBY z -inf f
ZINCRBY z inf e
ZINCRBY newkey 2 m
ZADD z 0 a
ZADD z -0 a
ZSCORE z a
ZCARD z
ZCARD nokey
ZREM z a nope b
ZREM z nope
ZREM nokey a
ZADD one 1 only
ZREM one only
EXISTS one
SET s x
ZADD s 1 a
ZSCORE s a
ZMSCORE s a
ZCARD s
ZREM s a
ZINCRBY s 1 a
ZINCRBY s x a
ZADD s x a
""")

RANGES = script("""
ZADD r 1 a 2 b 3 c 4 d 5 e 5 ee
ZRANGE r 0 -1
ZRANGE r 0 -1 WITHSCORES
ZRANGE r 0 -1 withscores REV
ZRANGE r -3 -2
ZRANGE r -100 100
ZRANGE r 3 1
ZRANGE r 10 20
ZRANGE r a 1
ZRANGE r 0 b
ZRANGE r 0 -1 LIMIT 0 1
ZRANGE r 0 -1 LIMIT 0 -1
ZRANGE r 0 -1 LIMIT 1
ZRANGE r 0 -1 BYSCORE BYLEX
ZRANGE r 0 -1 REV REV
ZRANGE r 0 -1 FOO
ZRANGE r (1 3 BYSCORE WITHSCORES
ZRANGE r 3 (1 BYSCORE REV LIMIT 1 2
ZRANGE r -inf +inf BYSCORE LIMIT 2 2
ZRANGE r -inf +inf BYSCORE LIMIT 2 -5
ZRANGE r -inf +inf BYSCORE LIMIT -1 2
ZRANGE r -inf +inf BYSCORE LIMIT 100 2
ZRANGE r -inf +inf BYSCORE LIMIT a 2
ZRANGE r (5 5 BYSCORE
ZRANGE r 5 (5 BYSCORE
ZRANGE r 5 5 BYSCORE
ZRANGE r 6 1 BYSCORE
ZRANGE r x 1 BYSCORE
ZRANGE r 1 ( BYSCORE
ZRANGE r [a [c BYLEX LIMIT 1 1
ZRANGE r 1 2 BYLEX WITHSCORES
ZRANGE r 1 2 BYLEX
ZRANGE nokey 0 -1
ZRANGE nokey x y BYSCORE
ZRANGE nokey 0 1 WITHSCORES
ZRANGEBYSCORE r 2 4 WITHSCORES LIMIT 1 1
ZRANGEBYSCORE r 2 4 LIMIT -1 1
ZRANGEBYSCORE r 2 4 LIMIT 1 -1
ZRANGEBYSCORE r 2 4 LIMIT 10 1
ZRANGEBYSCORE r 2 4 REV
ZRANGEBYSCORE r 2 4 BYSCORE
ZRANGEBYSCORE r 2 4 LIMIT 1
ZREVRANGEBYSCORE r 4 2
ZREVRANGEBYSCORE r 2 4
ZREVRANGEBYSCORE r +inf -inf WITHSCORES LIMIT 1 3
ZREVRANGEBYSCORE r (5 (1
ZREVRANGE r 0 1 WITHSCORES
ZREVRANGE r -100 100
ZREVRANGE r 0 1 LIMIT 0 1
ZREVRANGE r 0 1 REV
ZADD l 0 a 0 b 0 c 0 d 0 e 0 ee
ZRANGEBYLEX l [b (d
ZRANGEBYLEX l - +
ZRANGEBYLEX l + -
ZRANGEBYLEX l - -
ZRANGEBYLEX l + +
ZRANGEBYLEX l [e +
ZRANGEBYLEX l (e +
ZREVRANGEBYLEX l + - LIMIT 1 2
ZREVRANGEBYLEX l [d [b
ZREVRANGEBYLEX l [b [d
ZRANGEBYLEX l b d
ZRANGEBYLEX l [b [b
ZRANGEBYLEX l (b [b
ZRANGEBYLEX l [b (b
ZRANGEBYLEX l +a +
ZRANGEBYLEX l - + WITHSCORES
ZRANGEBYLEX l - + LIMIT 2 -1
ZRANGEBYLEX l - + LIMIT -2 1
ZRANGE l (c + BYLEX
ZRANGE l + (c BYLEX REV
ZLEXCOUNT l [b +
ZLEXCOUNT l x +
ZLEXCOUNT l - +
ZLEXCOUNT l (e [a
ZLEXCOUNT nokey - +
ZLEXCOUNT nokey a +
ZCOUNT r -inf +inf
ZCOUNT r (1 (5
ZCOUNT r 5 5
ZCOUNT r (5 5
ZCOUNT r a b
ZCOUNT r "" 5
ZCOUNT r " 1" 1e400
ZCOUNT r ( (
ZCOUNT nokey 0 1
ZCOUNT nokey a b
ZRANK r a
ZRANK r ee
ZREVRANK r a
ZREVRANK r ee
ZRANK r nope
ZRANK nokey a
SET s x
ZRANGE s 0 -1
ZRANGE s a 1
ZRANGEBYSCORE s 0 1
ZRANGEBYLEX s - +
ZCOUNT s 0 1
ZLEXCOUNT s - +
ZRANK s a
ZRANGESTORE dst r 0 1
ZRANGE dst 0 -1 WITHSCORES
ZRANGESTORE dst r 0 1 WITHSCORES
ZRANGESTORE dst r 10 20
EXISTS dst
ZRANGESTORE dst r 0 -1 REV
ZRANGE dst 0 -1 WITHSCORES
ZRANGESTORE dst nokey 0 -1
EXISTS dst
ZRANGESTORE dst r (1 3 BYSCORE LIMIT 0 1
ZRANGE dst 0 -1 WITHSCORES
ZRANGESTORE dst l [b [d BYLEX
ZRANGE dst 0 -1
ZRANGESTORE dst r 5 1 BYSCORE REV
ZRANGE dst 0 -1
ZRANGESTORE dst r 0 -1 LIMIT 0 1
ZRANGESTORE s r 0 0
TYPE s
ZRANGESTORE dst s 0 0
ZRANGESTORE r r 1 2
ZRANGE r 0 -1 WITHSCORES
""")

REMOVALS_AND_POPS = script("""
ZADD r 1 a 2 b 3 c 4 d 5 e
ZREMRANGEBYSCORE r (1 x
ZREMRANGEBYSCORE r (4 +inf
ZREMRANGEBYSCORE r 10 20
ZREMRANGEBYRANK r a 1
ZREMRANGEBYRANK r 0 0
ZREMRANGEBYRANK r 5 10
ZREMRANGEBYRANK r -1 -1
ZRANGE r 0 -1 WITHSCORES
ZREMRANGEBYRANK r 0 -1
EXISTS r
ZADD l 0 a 0 b 0 c 0 d
ZREMRANGEBYLEX l a b
ZREMRANGEBYLEX l [a [b
ZREMRANGEBYLEX l (d +
ZREMRANGEBYLEX l - +
EXISTS l
ZREMRANGEBYSCORE nokey 0 1
ZREMRANGEBYRANK nokey 0 1
ZREMRANGEBYLEX nokey - +
SET s x
ZREMRANGEBYSCORE s 0 1
ZREMRANGEBYSCORE s x 1
ZADD z 1 a 2 b 3 c 4 d 5 e 6 f
ZPOPMIN z
ZPOPMAX z 2
ZPOPMIN z 0
ZPOPMIN z -1
ZPOPMIN z x
ZPOPMIN z 1 2
ZPOPMIN nokey
ZPOPMIN nokey 3
ZPOPMIN nokey 0
ZPOPMIN s
ZPOPMIN s 0
ZPOPMAX s 1
ZMPOP 1 z MIN
ZMPOP 2 nokey z MAX COUNT 2
ZMPOP 0 z MIN
ZMPOP -1 z MIN
ZMPOP x z MIN
ZMPOP 1 z
ZMPOP 1 z MED
ZMPOP 1 z MIN COUNT 0
ZMPOP 1 z MIN COUNT -1
ZMPOP 1 z MIN COUNT x
ZMPOP 1 z MIN COUNT
ZMPOP 1 z MIN COUNT 1 COUNT 2
ZMPOP 1 z MIN FOO
ZMPOP 5 z MIN
ZMPOP 9223372036854775807 z MIN
ZMPOP 4611686018427387904 z MIN
ZMPOP 2 z MIN
ZMPOP 1 nokey MIN
ZMPOP 2 nokey s MIN
ZMPOP 2 z s max
ZMPOP 1 z min count 10
EXISTS z
ZMPOP 1 z MIN
BZPOPMIN s 0
BZPOPMIN z x
BZPOPMIN z -1
ZADD z 1 a 2 b 3 c
BZPOPMIN nokey z 0
BZPOPMAX z 0
BZPOPMAX z s 0
ZADD z 1 a 2 b 3 c
BZMPOP 0 1 z MIN COUNT 5
BZMPOP x 1 z MIN
BZMPOP -1 1 z MIN
BZMPOP 0 0 z MIN
BZMPOP 0 9223372036854775807 z MIN
BZMPOP 0 1 z
BZMPOP 0 1 s MIN
EXISTS z
""")

RANDOM_AND_SCAN = script("""
ZADD r 1 a 2 b 3 c 2.5 d
ZRANDMEMBER nokey
ZRANDMEMBER nokey 5
ZRANDMEMBER nokey 5 WITHSCORES
ZRANDMEMBER r 0
ZRANDMEMBER r 0 WITHSCORES
ZRANDMEMBER r 10
ZRANDMEMBER r 4 WITHSCORES
ZRANDMEMBER r 1 WITHSCORE
ZRANDMEMBER r x
ZRANDMEMBER r 1 WITHSCORES x
ZRANDMEMBER r -9223372036854775807 WITHSCORES
ZRANDMEMBER r 9223372036854775807 WITHSCORES
ZRANDMEMBER r -9223372036854775808
ZRANDMEMBER r 99999999999999999999
SET s x
ZRANDMEMBER s
ZRANDMEMBER s 1
ZSCAN r 0
ZSCAN r 0 MATCH *b*
ZSCAN r 0 MATCH * COUNT 1
ZSCAN r 0 match [ab] count 100
ZSCAN r 0 COUNT 0
ZSCAN r 0 COUNT x
ZSCAN r 0 FOO
ZSCAN r 0 COUNT
ZSCAN r x
ZSCAN r -1
ZSCAN nokey 0 FOO
ZSCAN nokey x
ZSCAN s 0
""")


UNION_AND_INTERSECTION = script("""
ZADD a 1 x 2 y 3 z inf w
ZADD b 10 y 20 z -inf w 4 v
SADD s y q
SET str v
ZUNIONSTORE u 2 a b
ZRANGE u 0 -1 WITHSCORES
ZINTERSTORE i 2 a b
ZRANGE i 0 -1 WITHSCORES
ZUNIONSTORE u 2 a b WEIGHTS 2 0.5
ZRANGE u 0 -1 WITHSCORES
ZINTERSTORE i 2 a b AGGREGATE MAX
ZRANGE i 0 -1 WITHSCORES
ZUNIONSTORE u 2 a b AGGREGATE min WEIGHTS 0 1
ZRANGE u 0 -1 WITHSCORES
ZUNIONSTORE u 2 a b WEIGHTS 1 2 AGGREGATE max
ZRANGE u 0 -1 WITHSCORES
ZINTERSTORE i 2 a nokey
EXISTS i
ZUNIONSTORE u 1 nokey
EXISTS u
ZUNIONSTORE a 2 a a
ZRANGE a 0 -1 WITHSCORES
ZINTERSTORE i 2 a str
ZUNIONSTORE u 0 a
ZUNIONSTORE u -1 a
ZUNIONSTORE u x a
ZUNIONSTORE u 3 a b
ZUNIONSTORE u 2 a b WEIGHTS 1
ZUNIONSTORE u 2 a b WEIGHTS 1 x
ZUNIONSTORE u 2 a b WEIGHTS 1 nan
ZUNIONSTORE u 2 a b AGGREGATE avg
ZUNIONSTORE u 2 a b AGGREGATE
ZUNIONSTORE u 2 a b WITHSCORES
ZUNIONSTORE str 1 b
TYPE str
ZUNIONSTORE u 3 a b s WEIGHTS 2 0.5 -1
ZRANGE u 0 -1 WITHSCORES
ZINTERSTORE i 3 a b s AGGREGATE MAX
ZRANGE i 0 -1 WITHSCORES
ZINTERSTORE i 1 s
ZRANGE i 0 -1 WITHSCORES
""")

# ZUNION, ZINTER, ZDIFF, ZDIFFSTORE and ZINTERCARD: the replying forms order by
# (score, member); sets count as scores of 1; each takes only its own options.
COMBINATIONS = script("""
ZADD a 1 x 2 y 3 z inf w 0 n
ZADD b 10 y 20 z -inf w 4 v -3 n
SADD s y q
SET str v
ZUNION 2 a b
ZUNION 2 a b WITHSCORES
ZUNION 2 a b WEIGHTS 0 -1 WITHSCORES
ZUNION 2 a b AGGREGATE MIN WITHSCORES
ZUNION 2 a b withscores aggregate max weights 2 0.5
ZUNION 3 a b s WITHSCORES WITHSCORES
ZUNION 1 nokey WITHSCORES
ZUNION 2 a a WITHSCORES
ZUNION 1 a WEIGHTS -1 WITHSCORES
ZINTER 2 a a WEIGHTS -1 0 WITHSCORES
ZINTER 2 a b
ZINTER 2 a b WITHSCORES
ZINTER 3 a b s WITHSCORES AGGREGATE MAX
ZINTER 2 a s WEIGHTS 1 -1 WITHSCORES
ZINTER 2 a nokey WITHSCORES
ZINTER 1 s WITHSCORES
ZDIFF 2 a b
ZDIFF 2 a b WITHSCORES
ZDIFF 3 a s nokey WITHSCORES
ZDIFF 1 s WITHSCORES
ZDIFF 2 nokey a
ZDIFF 2 a a WITHSCORES
ZDIFF 2 a b WEIGHTS 1 1
ZDIFF 2 a b AGGREGATE SUM
ZDIFFSTORE d 2 a s
ZRANGE d 0 -1 WITHSCORES
ZDIFFSTORE d 2 a s WITHSCORES
ZDIFFSTORE d 2 a b WEIGHTS 1 1
ZDIFFSTORE d 2 a a
EXISTS d
ZDIFFSTORE d 1 nokey
ZDIFFSTORE str 1 s
TYPE str
ZRANGE str 0 -1 WITHSCORES
ZDIFFSTORE d 0 a
ZDIFFSTORE d 2 a
ZDIFFSTORE d 1 a str
SET str v
ZINTERCARD 2 a b
ZINTERCARD 3 a b s
ZINTERCARD 2 a b LIMIT 0
ZINTERCARD 2 a b LIMIT 1
ZINTERCARD 2 a b LIMIT 2
ZINTERCARD 2 a b LIMIT 100
ZINTERCARD 2 a b LIMIT -1
ZINTERCARD 2 a b LIMIT x
ZINTERCARD 2 a b LIMIT
ZINTERCARD 2 a b LIMIT 1 LIMIT 2
ZINTERCARD 2 a b WITHSCORES
ZINTERCARD 2 a b WEIGHTS 1 1
ZINTERCARD 2 a b AGGREGATE MAX
ZINTERCARD 1 nokey
ZINTERCARD 1 s
ZINTERCARD 0 a
ZINTERCARD -1 a
ZINTERCARD x a
ZINTERCARD 3 a b
ZUNION 0 a
ZINTER -1 a
ZUNION 3 a b
ZUNION 2 a str
ZINTER 2 str a
ZDIFF 2 a str
ZINTERCARD 2 a str
ZUNION 2 a b WEIGHTS 1
ZUNION 2 a b WEIGHTS 1 x
ZUNION 2 a b AGGREGATE avg
ZUNION 2 a b LIMIT 1
ZINTER 2 a b WITHSCORE
""")


@pytest.mark.parametrize("name,commands", [
    ("union_and_intersection", UNION_AND_INTERSECTION),
    ("combinations", COMBINATIONS),
    ("add_and_scores", ADD_AND_SCORES),
    ("ranges", RANGES),
    ("removals_and_pops", REMOVALS_AND_POPS),
    ("random_and_scan", RANDOM_AND_SCAN),
])
def test_commands_answer_as_redis(engine, oracle, name, commands):
    run_both(engine, oracle, commands, label=name)


def test_resp3_replies_match(redis_server):
    """Doubles, [member, score] pairs and null arrays as RESP3 writes them."""
    ours = EmbeddedRedis(protocol=3)
    theirs = redis.Redis(*redis_server, protocol=3)
    for client in (ours, theirs):
        client.response_callbacks.clear()
    theirs.flushall()
    commands = script("""
    ZADD z 1 a 2 b 3 c 1.5 d -inf e
    ZSCORE z d
    ZSCORE z e
    ZMSCORE z a x
    ZINCRBY z 1 a
    ZADD z INCR 1 a
    ZRANGE z 0 -1
    ZRANGE z 0 -1 WITHSCORES
    ZRANGEBYSCORE z -inf inf WITHSCORES
    ZREVRANGE z 0 1 WITHSCORES
    ZPOPMIN z
    ZPOPMIN z 1
    ZPOPMAX z 0
    ZPOPMIN nokey
    ZPOPMIN nokey 2
    ZMPOP 1 z MIN
    ZMPOP 1 nokey MIN
    BZPOPMIN z 0
    BZMPOP 0 1 z MAX COUNT 5
    ZADD r 1 a 2 b
    ZRANDMEMBER r 5 WITHSCORES
    ZRANDMEMBER nokey
    ZRANDMEMBER nokey 1
    ZSCAN r 0
    ZRANK r b
    ZRANK r x
    ZADD q -1 a 5 c
    ZUNION 2 r q
    ZUNION 2 r q WITHSCORES
    ZINTER 2 r q WEIGHTS 1 0 WITHSCORES
    ZDIFF 2 r q WITHSCORES
    ZDIFF 1 nokey WITHSCORES
    ZINTERCARD 2 r q
    """)
    try:
        for cmd in commands:
            assert ours.execute_command(*cmd) == theirs.execute_command(*cmd), cmd
    finally:
        ours.close()
        theirs.close()


# -- a generated sequence ---------------------------------------------------------------

def random_command(rng: random.Random) -> tuple:
    """One sorted-set command with arguments drawn to hit edges (infinities, exclusive
    bounds, bad numbers, LIMIT, WITHSCORES, missing and wrong-type keys)."""
    key = rng.choice(["z1", "z1", "z2", "z3", "str"])
    lex_key = "lex"
    score, member = rng.choice(SCORES), rng.choice(MEMBERS)
    low, high = rng.choice(BOUNDS), rng.choice(BOUNDS)
    lmin, lmax = rng.choice(LEX), rng.choice(LEX)
    options = []
    if rng.random() < 0.3:
        options += ["LIMIT", rng.randint(-1, 3), rng.randint(-1, 4)]
    roll = rng.randrange(26)
    if roll == 0:
        flags = rng.sample(["NX", "XX", "GT", "LT", "CH", "INCR"], rng.randint(0, 2))
        pairs = [x for _ in range(rng.randint(1, 3)) for x in (rng.choice(SCORES), rng.choice(MEMBERS))]
        return ("ZADD", key, *flags, *pairs)
    if roll == 1:
        return ("ZADD", lex_key, "0", rng.choice(MEMBERS) + rng.choice(["", "x", "yy"]))
    if roll == 2:
        return ("ZINCRBY", key, score, member)
    if roll == 3:
        return ("ZREM", key, *rng.sample(MEMBERS, rng.randint(1, 3)))
    if roll == 4:
        return ("ZSCORE", key, member)
    if roll == 5:
        return ("ZMSCORE", key, *rng.sample(MEMBERS, 3))
    if roll == 6:
        return ("ZCARD", rng.choice([key, lex_key]))
    if roll == 7:
        return ("ZCOUNT", key, low, high)
    if roll == 8:
        return ("ZLEXCOUNT", lex_key, lmin, lmax)
    if roll == 9:
        start, stop = rng.randint(-5, 5), rng.randint(-5, 5)
        extra = rng.sample(["REV", "WITHSCORES"], rng.randint(0, 2))
        return ("ZRANGE", key, start, stop, *extra)
    if roll == 10:
        extra = rng.sample(["REV", "WITHSCORES"], rng.randint(0, 2))
        if "REV" in extra:
            low, high = high, low
        return ("ZRANGE", key, low, high, "BYSCORE", *extra, *options)
    if roll == 11:
        extra = ["REV"] if rng.random() < 0.5 else []
        if extra:
            lmin, lmax = lmax, lmin
        return ("ZRANGE", lex_key, lmin, lmax, "BYLEX", *extra, *options)
    if roll == 12:
        name = rng.choice(["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"])
        extra = ["WITHSCORES"] if rng.random() < 0.5 else []
        return (name, key, low, high, *extra, *options)
    if roll == 13:
        name = rng.choice(["ZRANGEBYLEX", "ZREVRANGEBYLEX"])
        return (name, lex_key, lmin, lmax, *options)
    if roll == 14:
        extra = ["WITHSCORES"] if rng.random() < 0.5 else []
        return ("ZREVRANGE", key, rng.randint(-4, 4), rng.randint(-4, 4), *extra)
    if roll == 15:
        kind = rng.choice([[rng.randint(-3, 3), rng.randint(-3, 3)], [low, high, "BYSCORE"],
                           [lmin, lmax, "BYLEX"]])
        return ("ZRANGESTORE", rng.choice(["dst", "z3"]), rng.choice([key, lex_key]), *kind)
    if roll == 16:
        return (rng.choice(["ZRANK", "ZREVRANK"]), key, member)
    if roll == 17:
        name = rng.choice(["ZPOPMIN", "ZPOPMAX"])
        return (name, key, *([rng.randint(-1, 3)] if rng.random() < 0.6 else []))
    if roll == 18:
        count = ["COUNT", rng.randint(0, 3)] if rng.random() < 0.5 else []
        return ("ZMPOP", 2, key, rng.choice(["z1", "z2", lex_key]), rng.choice(["MIN", "MAX"]), *count)
    if roll == 19:
        return (rng.choice(["BZPOPMIN", "BZPOPMAX"]), key, rng.choice(["z1", "z2"]), "0.01")
    if roll == 20:
        return ("ZREMRANGEBYSCORE", key, low, high)
    if roll == 21:
        return ("ZREMRANGEBYRANK", key, rng.randint(-4, 4), rng.randint(-4, 4))
    if roll == 22:
        return ("ZREMRANGEBYLEX", lex_key, lmin, lmax)
    if roll == 23:
        return ("ZRANDMEMBER", key, rng.choice([0, 20]), *(["WITHSCORES"] if rng.random() < 0.5 else []))
    if roll == 24:
        return ("ZSCAN", rng.choice([key, lex_key]), 0, *(["MATCH", "*" + member + "*"] if rng.random() < 0.5 else []))
    if roll == 25 and rng.random() < 0.6:
        name = rng.choice(["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZUNION", "ZINTER",
                           "ZDIFF", "ZINTERCARD"])
        extra = rng.choice([[], ["WEIGHTS", rng.choice(SCORES[:7]), rng.choice(SCORES)],
                            ["AGGREGATE", rng.choice(["SUM", "MIN", "MAX"])], ["WITHSCORES"],
                            ["LIMIT", rng.randint(-1, 3)]])
        dst = [rng.choice(["dst", "z3"])] if name.endswith("STORE") else []
        return (name, *dst, 2, key, rng.choice(["z1", "z2", "lex", "set"]), *extra)
    return rng.choice([("SET", "str", "v"), ("DEL", key), ("TYPE", key), ("EXISTS", "dst"),
                       ("SADD", "set", member)])


@pytest.mark.parametrize("seed", range(4))
def test_random_sequences_answer_as_redis(engine, oracle, seed):
    rng = random.Random(seed)
    run_both(engine, oracle, [random_command(rng) for _ in range(600)], label=f"zset seed {seed}")


def test_skiplist_sized_sets_answer_as_redis(engine, oracle):
    """Ranks, score and lex ranges (LIMIT, REV), pops and stores on sets of 300."""
    rng = random.Random(5)
    scores = ["1", "2", "2.5", "-inf", "inf", "7"]
    bounds = ["-inf", "1", "(1", "2", "(2.5", "inf", "(7"]
    lex = ["-", "+", "[w0100", "(w0500", "[w0999", "(w0002"]
    cmds = [("ZADD", "big", *[x for i in range(300) for x in (rng.choice(scores), f"m{i:03d}")]),
            ("ZADD", "lex", *[x for i in range(300) for x in ("0", f"w{rng.randrange(1000):04d}")])]
    for _ in range(400):
        lo, hi = rng.choice(bounds), rng.choice(bounds)
        a, b = rng.choice(lex), rng.choice(lex)
        limit = ["LIMIT", rng.randint(-1, 50), rng.randint(-1, 50)] if rng.random() < 0.4 else []
        member = f"m{rng.randrange(320):03d}"
        cmds.append(rng.choice([
            ("ZRANGE", "big", rng.randint(-320, 320), rng.randint(-320, 320), "WITHSCORES"),
            ("ZRANGE", "big", rng.randint(-320, 320), rng.randint(-320, 320), "REV"),
            ("ZRANGE", "big", lo, hi, "BYSCORE", *limit),
            ("ZRANGE", "big", hi, lo, "BYSCORE", "REV", "WITHSCORES", *limit),
            ("ZRANGE", "lex", a, b, "BYLEX", *limit),
            ("ZRANGE", "lex", b, a, "BYLEX", "REV", *limit),
            ("ZCOUNT", "big", lo, hi), ("ZLEXCOUNT", "lex", a, b),
            ("ZRANK", "big", member), ("ZREVRANK", "lex", f"w{rng.randrange(1000):04d}"),
            ("ZADD", "big", rng.choice(["1", "3", "-0"]), member),
            ("ZREM", "lex", f"w{rng.randrange(1000):04d}"),
            ("ZREMRANGEBYRANK", "big", rng.randint(-300, 300), rng.randint(-300, 300))
            if rng.random() < 0.05 else ("ZCARD", "big"),
            ("ZREMRANGEBYLEX", "lex", a, b) if rng.random() < 0.05 else ("ZCARD", "lex"),
            ("ZPOPMIN", "big", rng.randint(0, 3)), ("ZSCORE", "big", member),
            ("ZRANGESTORE", "dst", "big", lo, hi, "BYSCORE"),
            ("ZUNIONSTORE", "u", 2, "big", "dst", "WEIGHTS", 2, 1),
            ("ZUNION", 2, "big", "dst", "WEIGHTS", rng.choice([-1, 0.5]), 1, "WITHSCORES"),
            ("ZINTER", 2, "dst", "big", "AGGREGATE", "MAX", "WITHSCORES"),
            ("ZDIFF", 2, "big", "dst", "WITHSCORES"), ("ZDIFFSTORE", "d", 2, "big", "dst"),
            ("ZINTERCARD", 2, "big", "dst", "LIMIT", rng.randint(0, 200)),
            ("ZRANGE", "d", 0, -1, "WITHSCORES"),
        ]))
    run_both(engine, oracle, cmds, label="skiplist-sized")


# -- newer than 7.0: ZRANK WITHSCORE ----------------------------------------------------

def test_rank_with_score():
    engine = Engine()
    engine.execute("ZADD", "z", "1.5", "a", "2", "b")
    assert engine.execute("ZRANK", "z", "b", "WITHSCORE") == [1, b"2"]
    assert engine.execute("ZREVRANK", "z", "b", "withscore") == [0, b"2"]
    assert engine.execute("ZRANK", "z", "a", "WITHSCORE") == [0, b"1.5"]
    assert engine.execute("ZRANK", "z", "nope", "WITHSCORE") is None
    assert engine.execute("ZRANK", "nokey", "a", "WITHSCORE") is None
    with pytest.raises(ResponseError, match="^ERR syntax error$"):
        engine.execute("ZRANK", "z", "a", "WITHSCORES")
    with pytest.raises(ResponseError, match="wrong number of arguments for 'zrevrank'"):
        engine.execute("ZREVRANK", "z", "a", "WITHSCORE", "x")
    client = EmbeddedRedis(protocol=3)
    client.zadd("z", {"a": 1.5})
    client.response_callbacks.clear()
    assert client.execute_command("ZRANK", "z", "a", "WITHSCORE") == [0, 1.5]
    assert client.execute_command("ZRANK", "z", "x", "WITHSCORE") is None


# -- randomness and scanning --------------------------------------------------------------

def test_random_members_follow_the_count_rules():
    engine = Engine()
    members = {f"m{i}".encode(): float(i) for i in range(50)}
    engine.execute("ZADD", "z", *[x for m, s in members.items() for x in (s, m)])
    one = engine.execute("ZRANDMEMBER", "z")
    assert one in members
    distinct = engine.execute("ZRANDMEMBER", "z", 20)
    assert len(distinct) == len(set(distinct)) == 20 and set(distinct) <= set(members)
    repeated = engine.execute("ZRANDMEMBER", "z", -200)
    assert len(repeated) == 200 and set(repeated) <= set(members)
    assert len(set(repeated)) > 1
    with_scores = engine.execute("ZRANDMEMBER", "z", -30, "WITHSCORES")
    for member, score in zip(with_scores[::2], with_scores[1::2]):
        assert float(score) == members[member]
    assert engine.execute("ZRANDMEMBER", "z", 1000) == sorted(members, key=members.get, reverse=True)


def test_scan_of_a_large_set_answers_at_once():
    """A skiplist-sized set comes back whole with cursor 0 (as HSCAN/SSCAN do here; see
    DELIBERATE_DIFFERENCES), MATCH filtering it."""
    engine = Engine()
    members = {f"m{i}".encode(): i * 0.5 for i in range(400)}
    engine.execute("ZADD", "z", *[x for m, s in members.items() for x in (s, m)])
    assert engine.databases[0].peek(b"z").encoding() == b"skiplist"
    cursor, flat = engine.execute("ZSCAN", "z", 0, "COUNT", 10)
    assert cursor == b"0"
    assert {m: float(s) for m, s in zip(flat[::2], flat[1::2])} == members
    cursor, flat = engine.execute("ZSCAN", "z", 0, "MATCH", "m1?")
    assert sorted(flat[::2]) == sorted(b"m1%d" % i for i in range(10))


# -- encodings, effects -------------------------------------------------------------------

def test_encoding_follows_redis_thresholds(engine, oracle):
    """listpack up to 128 members of at most 64 bytes, then skiplist for good; a
    listpack keeps no -0 score, a skiplist does (as Redis stores them)."""
    commands = script("""
    ZADD small 1 a
    ZADD long 1 """ + "a" * 65 + """
    """ + "\n".join(f"ZADD big {i} m{i}" for i in range(129)) + """
    ZREMRANGEBYRANK big 0 120
    ZADD big -0 zero
    ZSCORE big zero
    ZADD small -0 zero
    ZSCORE small zero
    ZADD small 0 zero2 -0 zero3
    ZRANGE small 0 -1 WITHSCORES
    TYPE big
    ZADD created -0 zero """ + " ".join(f"{i} n{i}" for i in range(129)) + """
    ZSCORE created zero
    ZADD created2 -0 zero """ + " ".join(f"{i} n{i}" for i in range(127)) + """
    ZSCORE created2 zero
    """)
    run_both(engine, oracle, commands)
    db = engine.databases[0]
    assert [db.peek(k).encoding() for k in (b"small", b"long", b"big")] == \
        [b"listpack", b"skiplist", b"skiplist"]
    assert [oracle.execute("OBJECT", "ENCODING", k) for k in ("small", "long", "big")] == \
        [b"listpack", b"skiplist", b"skiplist"]


def test_combinations_keep_a_skiplists_negative_zero_as_redis(engine, oracle):
    """-0 stays in a skiplist-sized result and in a reply, and becomes 0 in a small
    (listpack) stored one."""
    members = [x for i in range(130) for x in (i + 1, f"m{i}")]
    run_both(engine, oracle, [
        ("ZADD", "big", *members, "-0", "zero"), ("ZADD", "other", *members),
        ("ZDIFFSTORE", "d", 1, "big"), ("ZSCORE", "d", "zero"),
        ("ZDIFFSTORE", "r", 2, "big", "other"), ("ZSCORE", "r", "zero"),
        ("OBJECT", "ENCODING", "r"), ("ZDIFF", 2, "big", "other", "WITHSCORES"),
        ("ZUNIONSTORE", "u", 1, "big", "WEIGHTS", -1), ("ZSCORE", "u", "zero"),
        ("ZINTER", 2, "big", "other", "WEIGHTS", -1, 1, "WITHSCORES"),
        ("ZUNION", 2, "big", "other", "AGGREGATE", "MIN", "WITHSCORES")])


def test_combinations_of_every_encoding_answer_as_redis(engine, oracle):
    """ZUNION & co. over sources in each encoding (listpack and skiplist sorted sets;
    intset, listpack and hash-table sets scoring 1), integers met as text, weights of
    inf, -inf and 0 (inf * 0 and inf + -inf count as 0), each AGGREGATE, a store into
    one of its own sources, and ZINTERCARD's LIMIT."""
    rng = random.Random(11)
    big = [x for i in range(200) for x in (rng.choice(["1", "-2.5", "inf", "-inf", "0", "7"]),
                                            str(i) if i % 3 else f"m{i}")]
    cmds = [("ZADD", "small", "1", "1", "inf", "2", "-inf", "m3", "2.5", "x", "-0", "7"),
            ("ZADD", "big", *big),
            ("SADD", "ints", *range(0, 60, 2)),
            ("SADD", "strs", "x", "m3", "m6", "2", "q"),
            ("SADD", "table", *[f"m{i}" for i in range(0, 200, 3)], *range(100, 140)),
            ("OBJECT", "ENCODING", "big")]   # (7.0 has no listpack sets: "strs" is one here)
    keys = ["small", "big", "ints", "strs", "table", "nokey"]
    weights = ["1", "0", "-1", "inf", "-inf", "0.5", "2"]
    for _ in range(250):
        n = rng.randint(1, 4)
        srcs = [rng.choice(keys) for _ in range(n)]
        opts = []
        if rng.random() < 0.6:
            opts += ["WEIGHTS", *[rng.choice(weights) for _ in range(n)]]
        if rng.random() < 0.6:
            opts += ["AGGREGATE", rng.choice(["SUM", "MIN", "MAX"])]
        op = rng.choice(["ZUNION", "ZINTER"])
        cmds.append((op, n, *srcs, *opts, "WITHSCORES"))
        cmds.append((op + "STORE", "dst", n, *srcs, *opts))
        cmds.append(("ZRANGE", "dst", 0, -1, "WITHSCORES"))
        cmds.append(("OBJECT", "ENCODING", "dst"))
        cmds.append(("ZDIFF", n, *srcs, "WITHSCORES"))
        cmds.append(("ZDIFFSTORE", "diff", n, *srcs))
        cmds.append(("ZRANGE", "diff", 0, -1, "WITHSCORES"))
        cmds.append(("ZINTERCARD", n, *srcs, "LIMIT", rng.randint(0, 40)))
    cmds += [("ZUNIONSTORE", "small", 3, "small", "big", "strs", "WEIGHTS", 1, 2, 3),
             ("ZRANGE", "small", 0, -1, "WITHSCORES"), ("OBJECT", "ENCODING", "small"),
             ("ZINTERSTORE", "big", 2, "big", "table", "AGGREGATE", "MAX"),
             ("ZRANGE", "big", 0, -1, "WITHSCORES"), ("OBJECT", "ENCODING", "big"),
             ("ZDIFFSTORE", "ints", 2, "ints", "table"), ("ZRANGE", "ints", 0, -1, "WITHSCORES")]
    run_both(engine, oracle, cmds, label="combinations of every encoding")


def test_effects_replay_into_the_same_sets():
    rng = random.Random(7)
    engine = Engine()
    log = []
    engine.add_effect_listener(lambda db, effects: log.extend(effects))
    for _ in range(2000):
        try:
            engine.execute(*random_command(rng))
        except ResponseError:
            pass
    fresh = Engine()
    for argv in log:
        fresh.execute(*argv)
    for key in ("z1", "z2", "z3", "lex", "dst"):
        assert fresh.execute("ZRANGE", key, 0, -1, "WITHSCORES") == \
            engine.execute("ZRANGE", key, 0, -1, "WITHSCORES")
        assert fresh.execute("TYPE", key) == engine.execute("TYPE", key)
    assert {argv[0] for argv in log} <= {b"ZADD", b"ZREM", b"ZPOPMIN", b"ZPOPMAX", b"DEL",
                                         b"ZREMRANGEBYSCORE", b"ZREMRANGEBYRANK",
                                         b"ZREMRANGEBYLEX", b"SET", b"SADD"}


def test_value_record_round_trip():
    value = SortedSetValue.from_pairs([(1.5, b"a"), (float("-inf"), b"b"), (1e300, b"c")])
    again = SortedSetValue.from_record(value.to_record())
    assert list(again) == list(value) and again.encoding() == b"listpack"
    for bad in ([], [b"a"], [b"a", "1"], [b"a", float("nan")], [b"a", 1.0, b"a", 2.0], ["a", 1.0]):
        with pytest.raises(ValueError):
            SortedSetValue.from_record(bad)


# -- over the wire and from scripts ----------------------------------------------------------

SCRIPT_CALLS = [
    ("ZADD", "z", "1.5", "a", "inf", "b"),
    ("ZSCORE", "z", "a"),
    ("ZRANGE", "z", 0, -1, "WITHSCORES"),
    ("ZPOPMIN", "z", 1),
    ("EVAL", "return redis.call('ZSCORE', KEYS[1], 'b')", 1, "z"),
    ("EVAL", "return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')", 1, "z"),
    ("EVAL", "redis.setresp(3); return redis.call('ZSCORE', KEYS[1], 'b')", 1, "z"),
    ("EVAL", "redis.setresp(3); return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')", 1, "z"),
    ("EVAL", "redis.setresp(3); return tostring(redis.call('ZSCORE', KEYS[1], 'b')['double'])",
     1, "z"),
]


def test_server_and_scripts_reply_as_redis(redis_server):
    """sluice-server's replies in RESP2 and RESP3, and what scripts see of scores
    (bulk strings, or RESP3 doubles after redis.setresp(3))."""
    def run(host: str, port: int) -> list:
        out = []
        for protocol in (2, 3):
            client = redis.Redis(host, port, protocol=protocol)
            client.response_callbacks.clear()
            client.flushall()
            out += [client.execute_command(*cmd) for cmd in SCRIPT_CALLS]
            client.close()
        return out
    with SluiceServer() as srv:
        ours = run("127.0.0.1", srv.port)
    assert ours == run(*redis_server)
    assert ours[len(SCRIPT_CALLS) + 1] == 1.5            # a RESP3 double


def test_memory_follows_the_set():
    """In-place changes recount the set's footprint; removing it gives the bytes back."""
    engine = Engine()
    empty = engine.used_memory()
    engine.execute("ZADD", "z", 1, "a")
    one = engine.used_memory()
    engine.execute("ZADD", "z", *[x for i in range(500) for x in (i, b"member-%d" % i)])
    grown = engine.used_memory()
    assert empty < one < grown
    engine.execute("ZREMRANGEBYRANK", "z", 0, 399)
    assert one < engine.used_memory() < grown
    engine.execute("ZPOPMIN", "z", 1000)
    assert engine.execute("EXISTS", "z") == 0 and engine.used_memory() == empty


# -- the table records ----------------------------------------------------------------------

RECORDS = [r for r in COMMANDS.values() if r.group == "sorted-set"]


def test_every_sorted_set_command_is_registered():
    assert VALUE_TYPES[b"zset"] is SortedSetValue
    assert len(RECORDS) == 35 and all(callable(r.handler) for r in RECORDS)


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.name)
def test_record_matches_redis(record, oracle):
    """Arity, flags, keys, since and group as 7.0 has them (newer where listed)."""
    name, arity, flags, first, last, step = oracle.execute("COMMAND", "INFO", record.name)[0][:6]
    assert name == record.name.encode()
    assert arity == {"zrank": 3, "zrevrank": 3}.get(record.name, record.arity)
    ours = set(record.flags) | ({"movablekeys"} if record.movable_keys else set())
    assert ours | NEWER_FLAGS.get(record.name, set()) == {f.decode() for f in flags}
    assert (first, last, step) == (record.first_key, record.last_key, record.step)
    docs = oracle.execute("COMMAND", "DOCS", record.name)[1]
    docs = dict(zip(docs[::2], docs[1::2]))
    assert (docs[b"since"].decode(), docs[b"group"].decode()) == (record.since, record.group)
