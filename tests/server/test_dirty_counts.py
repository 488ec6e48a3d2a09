"""The change counter (INFO rdb_changes_since_last_save, Redis's `dirty`, what the save
points `save <seconds> <changes>` count) moves by as much as in redis-server 7.0 for
every write command. Each sequence runs on the oracle, on sluice-server and on an
embedded Engine (whose `dirty` the embedded save points read), and the step of each
command is compared across the three. Deliberate differences (tests/differential.py),
where newest Redis counts otherwise: a PEL re-read by XREADGROUP is no change (7.0
counts one per stream served); XREADGROUP, XCLAIM and XAUTOCLAIM create their consumer
(one change) even when they serve nothing; a served blocked command counts as the
same command run unblocked (7.0 counts none for BLPOP & co. and XREADGROUP)."""
from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from redis.exceptions import ResponseError

import collection_generator
import command_generator
import test_sorted_sets
from differential import BELOW_MAX_STREAM_ID, Command, NewestRedisEmulation, RedisOracle, parse_xread
from servers import SluiceServer

PAST_MS = "1000"                 # a unix time long gone, in ms and s
PAST_S = "1"
SLEEP = "SLEEP"                  # a pseudo command: the runner waits that many ms

SEQUENCES: dict[str, list[Command]] = {
    "strings": [
        ("SET", "k", "v"), ("SET", "k", "w", "NX"), ("SET", "k", "w", "XX"), ("SET", "n", "1", "XX"),
        ("SET", "k", "x", "GET"), ("SET", "k", "y", "KEEPTTL"), ("SET", "k", "z", "EX", "100"),
        ("SET", "k", "z", "EX", "0"), ("SETNX", "k", "a"), ("SETNX", "k2", "a"),
        ("SETEX", "k3", "100", "v"), ("PSETEX", "k4", "100000", "v"), ("GETSET", "k", "g"),
        ("GETSET", "new", "g"), ("MSET", "a", "1", "b", "2", "c", "3"), ("MSET", "a", "1"),
        ("MSETNX", "d", "1", "e", "2"), ("MSETNX", "d", "1", "f", "2"),
        ("INCR", "a"), ("INCRBY", "a", "5"), ("DECR", "a"), ("DECRBY", "a", "2"), ("INCR", "k"),
        ("INCRBYFLOAT", "a", "1.5"), ("INCRBYFLOAT", "nf", "2"), ("INCRBY", "a", "0"),
        ("APPEND", "k", "xy"), ("APPEND", "k", ""), ("APPEND", "ap", "z"), ("APPEND", "ap0", ""),
        ("SETRANGE", "k", "1", "QQ"), ("SETRANGE", "k", "1", ""), ("SETRANGE", "sr", "0", ""),
        ("SETRANGE", "sr", "3", "x"), ("SETRANGE", "k", "-1", "x"),
        ("GETDEL", "k"), ("GETDEL", "k"), ("GETEX", "a"), ("GETEX", "a", "EX", "100"),
        ("GETEX", "a", "PERSIST"), ("GETEX", "a", "PERSIST"), ("GETEX", "b", "PXAT", PAST_MS),
        ("GETEX", "missing", "EX", "10"), ("GET", "c"), ("STRLEN", "c"),
    ],
    "keys": [
        ("MSET", "a", "1", "b", "2", "c", "3", "d", "4"), ("DEL", "a", "b", "x", "a"),
        ("UNLINK", "c", "d", "y"), ("DEL", "none"),
        ("MSET", "a", "1", "b", "2"), ("RENAME", "a", "a"), ("RENAME", "a", "z"),
        ("RENAMENX", "z", "b"), ("RENAMENX", "z", "z"), ("RENAMENX", "z", "q"), ("RENAME", "nx", "q"),
        ("COPY", "q", "q2"), ("COPY", "q", "q2"), ("COPY", "q", "q2", "REPLACE"), ("COPY", "q", "q3", "DB", "1"),
        ("COPY", "nx", "q4"), ("MOVE", "q2", "1"), ("MOVE", "q", "1"), ("MOVE", "b", "1"), ("MOVE", "nx", "1"),
        ("SET", "e", "v"), ("EXPIRE", "e", "100"), ("EXPIRE", "e", "100", "NX"), ("EXPIRE", "e", "200", "GT"),
        ("EXPIRE", "e", "50", "GT"), ("PEXPIRE", "e", "100000", "LT"), ("TTL", "e"), ("PERSIST", "e"),
        ("PERSIST", "e"), ("EXPIREAT", "e", "99999999999"), ("PEXPIREAT", "e", "99999999999999"),
        ("EXPIRE", "nx", "10"), ("EXPIRE", "e", "-1"), ("SET", "e", "v"), ("EXPIREAT", "e", PAST_S),
        ("SET", "e", "v"), ("PEXPIREAT", "e", PAST_MS), ("SET", "e", "v"), ("PEXPIRE", "e", "0"),
        ("SET", "lazy", "v", "PX", "1"), ("SET", "lazy2", "v", "PX", "1"), (SLEEP, "20"),
        ("GET", "lazy"), ("EXISTS", "lazy2"), ("SET", "r", "v"), ("DUMP", "r"),
        ("SELECT", "1"), ("DEL", "q", "q3"), ("FLUSHDB",), ("SELECT", "0"),
        ("FLUSHDB",), ("FLUSHDB",), ("MSET", "a", "1", "b", "2"), ("FLUSHALL",), ("FLUSHALL",),
    ],
    "restore": [
        ("SET", "src", "v"), ("RPUSH", "lsrc", "a", "b", "c"), ("HSET", "hsrc", "f", "v", "g", "w"),
        ("DUMP:RESTORE", "src", "r1"), ("DUMP:RESTORE", "lsrc", "r2"), ("DUMP:RESTORE", "hsrc", "r3"),
        ("DUMP:RESTORE", "hsrc", "r3", "REPLACE"), ("DUMP:RESTORE", "hsrc", "r3"),
        ("DUMP:RESTORE", "src", "r4", "ABSTTL", PAST_MS),
    ],
    "lists": [
        ("RPUSH", "l", "a", "b", "c", "d", "a"), ("LPUSH", "l", "x", "y"), ("LPUSHX", "l", "1", "2", "3"),
        ("RPUSHX", "l", "4"), ("LPUSHX", "nl", "1"), ("LINSERT", "l", "BEFORE", "a", "w"),
        ("LINSERT", "l", "AFTER", "zz", "w"), ("LSET", "l", "0", "q"), ("LREM", "l", "0", "a"),
        ("LREM", "l", "1", "zz"), ("LREM", "l", "-1", "w"), ("LPOP", "l"), ("RPOP", "l"),
        ("LPOP", "l", "2"), ("RPOP", "l", "0"), ("RPOP", "l", "1"), ("LPOP", "nl", "2"),
        ("RPUSH", "l", "1", "2", "3", "4", "5", "6"), ("LTRIM", "l", "1", "-2"), ("LTRIM", "l", "0", "-1"),
        ("LTRIM", "l", "5", "1"), ("RPUSH", "l", "1", "2", "3"), ("RPOPLPUSH", "l", "l2"),
        ("RPOPLPUSH", "l", "l"), ("LMOVE", "l", "l2", "LEFT", "RIGHT"), ("LMOVE", "nl", "l2", "LEFT", "LEFT"),
        ("LMOVE", "l", "l", "LEFT", "RIGHT"), ("RPUSH", "l", "1", "2", "3", "4"),
        ("LMPOP", "2", "nl", "l", "LEFT", "COUNT", "3"), ("LMPOP", "1", "l", "RIGHT"),
        ("LMPOP", "1", "l", "RIGHT", "COUNT", "5"), ("LMPOP", "1", "l", "RIGHT"),
        ("RPUSH", "l", "1", "2", "3"), ("BLPOP", "nl", "l", "0"), ("BRPOP", "l", "0"),
        ("BLMOVE", "l", "l3", "RIGHT", "LEFT", "0"), ("BRPOPLPUSH", "l2", "l3", "0"),
        ("BLMPOP", "0", "1", "l2", "LEFT", "COUNT", "10"), ("RPUSH", "l", "z"), ("LPOP", "l", "5"),
        ("RPUSH", "big", "x" * 70, "a", "b"), ("LREM", "big", "0", "x" * 70), ("DEL", "l3"),
    ],
    "hashes": [
        ("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"), ("HSET", "h", "a", "9"),
        ("HSET", "h", "a", "9", "a", "8"), ("HMSET", "h", "q", "1", "r", "2"), ("HSETNX", "h", "z", "1"),
        ("HSETNX", "h", "z", "1"), ("HINCRBY", "h", "n", "2"), ("HINCRBY", "h", "n", "0"),
        ("HINCRBYFLOAT", "h", "n", "1.5"), ("HINCRBY", "h", "a", "x"), ("HDEL", "h", "a", "b", "x", "a"),
        ("HDEL", "nh", "a"), ("HSET", "h2", "f", "x" * 70), ("HDEL", "h2", "f"),
    ],
    "sets": [
        ("SADD", "s", "a", "b", "c", "d"), ("SADD", "s", "a", "e"), ("SADD", "s", "a"),
        ("SADD", "n", "1", "2", "3", "1"), ("SREM", "s", "a", "b", "x"), ("SPOP", "n"),
        ("SPOP", "s", "2"), ("SPOP", "s", "0"), ("SADD", "s", "1", "2", "3"), ("SPOP", "s", "100"),
        ("SPOP", "s", "1"), ("SADD", "s", "a", "b", "c"), ("SMOVE", "s", "s2", "c"),
        ("SMOVE", "s", "s2", "zz"), ("SMOVE", "s", "s", "a"), ("SMOVE", "s", "s2", "a"),
        ("SADD", "s", "a", "c", "x"), ("SINTERSTORE", "s3", "s", "s2"), ("SINTERSTORE", "s3", "s", "s2"),
        ("SINTERSTORE", "s3", "s", "none"), ("SINTERSTORE", "s4", "s", "none"),
        ("SUNIONSTORE", "s5", "s", "s2"), ("SUNIONSTORE", "s5", "none"), ("SUNIONSTORE", "s6", "none"),
        ("SDIFFSTORE", "s7", "s", "s2"), ("SDIFFSTORE", "s7", "s", "s"), ("SDIFFSTORE", "s8", "s", "s"),
    ],
    "sorted_sets": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZADD", "z", "1", "a", "5", "b", "4", "d"),
        ("ZADD", "z", "CH", "1", "a", "6", "b"), ("ZADD", "z", "NX", "9", "a", "9", "e"),
        ("ZADD", "z", "XX", "9", "a", "9", "f"), ("ZADD", "z", "GT", "1", "a", "10", "c"),
        ("ZADD", "z", "INCR", "1", "a"), ("ZADD", "z", "NX", "INCR", "1", "a"), ("ZINCRBY", "z", "1", "c"),
        ("ZINCRBY", "z", "0", "c"), ("ZREM", "z", "a", "x"), ("ZADD", "z", "1", "m1", "2", "m2", "3", "m3"),
        ("ZREMRANGEBYRANK", "z", "0", "1"), ("ZREMRANGEBYSCORE", "z", "3", "5"),
        ("ZREMRANGEBYSCORE", "z", "100", "200"), ("ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d"),
        ("ZREMRANGEBYLEX", "lex", "[a", "[b"), ("ZPOPMIN", "z"), ("ZPOPMAX", "z", "2"),
        ("ZPOPMIN", "z", "0"), ("ZPOPMIN", "nz", "3"), ("ZADD", "z", "1", "a", "2", "b", "3", "c"),
        ("ZMPOP", "2", "nz", "z", "MIN", "COUNT", "2"), ("ZMPOP", "1", "z", "MAX"), ("ZADD", "z", "1", "a"),
        ("BZPOPMIN", "nz", "z", "0"), ("ZADD", "z", "1", "a", "2", "b"), ("BZPOPMAX", "z", "0"),
        ("BZMPOP", "0", "1", "z", "MIN", "COUNT", "5"),
        ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZADD", "y", "1", "b", "2", "c", "3", "d"),
        ("ZUNIONSTORE", "u", "2", "z", "y"), ("ZUNIONSTORE", "u", "1", "nz"), ("ZUNIONSTORE", "u2", "1", "nz"),
        ("ZINTERSTORE", "i", "2", "z", "y"), ("ZINTERSTORE", "i", "2", "z", "nz"),
        ("ZDIFFSTORE", "d", "2", "z", "y"), ("ZDIFFSTORE", "d", "2", "z", "z"),
        ("ZRANGESTORE", "rs", "z", "0", "-1"), ("ZRANGESTORE", "rs", "z", "5", "9"),
        ("ZRANGESTORE", "rs2", "nz", "0", "-1"), ("ZADD", "big", "1", "x" * 70, "2", "b"),
        ("ZREM", "big", "x" * 70),
    ],
    "sort": [
        ("RPUSH", "l", "3", "1", "2"), ("SORT", "l", "STORE", "o"), ("SORT", "l", "STORE", "o"),
        ("SORT", "l", "LIMIT", "5", "5", "STORE", "o"), ("SORT", "l", "LIMIT", "5", "5", "STORE", "o2"),
        ("SORT", "nl", "STORE", "o"), ("SADD", "s", "b", "a"), ("SORT", "s", "ALPHA", "STORE", "o3"),
        ("SORT", "l"), ("SORT_RO", "l"),
    ],
    "scripts": [
        ("EVAL", "redis.call('SET', 'a', '1') redis.call('SADD', 's', 'x', 'y', 'z') return 1", "0"),
        ("EVAL", "return redis.call('GET', 'a')", "0"),
        ("EVAL", "redis.call('DEL', 'a', 's', 'none') return redis.call('RPUSH', KEYS[1], 'a', 'b')", "1", "l"),
        ("EVAL", "redis.call('SET', 'b', '1') return redis.call('INCR', 'l')", "0"),
        ("FUNCTION", "LOAD", "#!lua name=dirtylib\nredis.register_function('f', function(keys, args) "
                             "return redis.call('HSET', keys[1], 'a', 1, 'b', 2) end)"),
        ("FCALL", "f", "1", "h"), ("FUNCTION", "DELETE", "dirtylib"),
        ("FUNCTION", "FLUSH",),
    ],
    "transactions": [
        ("MULTI",), ("SET", "a", "1"), ("SADD", "s", "a", "b", "c"), ("RPUSH", "l", "x", "y"), ("EXEC",),
        ("MULTI",), ("GET", "a"), ("EXEC",), ("MULTI",), ("SET", "a", "2"), ("DISCARD",),
        ("MULTI",), ("INCR", "l"), ("DEL", "a", "s"), ("EXEC",),
        ("WATCH", "a"), ("SET", "a", "3"), ("MULTI",), ("SET", "b", "1"), ("EXEC",),
    ],
    "edges": [
        ("SET", "s", "v"), ("RPUSH", "l", "a"), ("SET", "l", "x", "GET"), ("SETRANGE", "s", "10", "x"),
        ("MSETNX", "s", "1"), ("HINCRBYFLOAT", "h", "f", "2.5"), ("HINCRBYFLOAT", "h", "f", "x"),
        ("HSETNX", "h", "g", "1"), ("INCRBYFLOAT", "s", "1"), ("SET", "t", "v", "EX", "100"),
        ("RENAME", "t", "t2"), ("EXPIRE", "t2", "100", "XX"), ("EXPIRE", "s", "100", "XX"),
        ("SET", "p", "v", "PX", "1"), (SLEEP, "20"), ("EXPIRE", "p", "100"), ("SET", "p2", "v", "PX", "1"),
        (SLEEP, "20"), ("RENAME", "p2", "p3"), ("COPY", "s", "s2", "DB", "0"), ("MOVE", "s", "0"),
        ("ZADD", "z", "NX", "INCR", "1", "a"), ("ZADD", "z", "XX", "INCR", "1", "b"), ("ZADD", "z", "XX", "1", "a"),
        ("ZADD", "z", "LT", "CH", "0", "a"), ("ZADD", "z", "GT", "0", "a"), ("ZADD", "z", "1", "a", "1", "a"),
        ("ZRANGESTORE", "zr", "z", "(0", "+inf", "BYSCORE"), ("ZRANGESTORE", "zr", "z", "[a", "+", "BYLEX"),
        ("RPUSH", "n", "3", "1", "2"), ("SET", "w_1", "9"), ("SET", "w_2", "8"),
        ("SORT", "n", "BY", "w_*", "GET", "#", "GET", "w_*", "STORE", "so"), ("SORT", "n", "BY", "nosort", "STORE", "so"),
        ("GETEX", "w_1", "EXAT", PAST_S), ("GETEX", "w_2", "PX", "100000"), ("GETEX", "w_2", "PXAT", "99999999999999"),
        ("PERSIST", "w_2"), ("XADD", "x", "1-0", "f", "v"), ("XADD", "x", "NOMKSTREAM", "MAXLEN", "0", "2-0", "f", "v"),
        ("XADD", "x", "MAXLEN", "~", "0", "3-0", "f", "v"), ("XTRIM", "x", "MAXLEN", "~", "0"),
        ("XTRIM", "x", "MINID", "9-0"), ("XGROUP", "CREATE", "x", "g", "0"), ("XGROUP", "SETID", "x", "g", "$"),
        ("XGROUP", "SETID", "x", "g", "0", "ENTRIESREAD", "0"), ("XSETID", "x", "9-0", "ENTRIESADDED", "9", "MAXDELETEDID", "1-0"),
        ("XGROUP", "CREATE", "x", "g", "$"), ("XGROUP", "CREATECONSUMER", "nx", "g", "c"),
        ("EVAL", "redis.call('SET', 'e', '1') return redis.call('HSET', 'e', 'a', 1)", "0"),
        ("EVAL", "redis.pcall('LPUSH', 'e', 'a') return redis.call('DEL', 'e', 'x', 's2')", "0"),
        ("EVAL_RO", "return redis.call('GET', 'w_2')", "0"),
        ("MULTI",), ("SET", "m", "1"), ("NOSUCH",), ("EXEC",), ("MULTI",), ("LPUSH", "m", "a"), ("SET", "m", "2"), ("EXEC",),
        ("SCRIPT", "FLUSH"), ("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('g', function() return 1 end)"),
        ("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nredis.register_function('g', function() return 2 end)"),
        ("FUNCTION:RESTORE",), ("FUNCTION", "FLUSH"), ("FUNCTION", "FLUSH"),
    ],
    "streams": [
        ("XADD", "x", "1-0", "f", "v"), ("XADD", "x", "2-0", "f", "v", "g", "w"),
        ("XADD", "x", "MAXLEN", "1", "3-0", "f", "v"), ("XADD", "nx", "NOMKSTREAM", "*", "f", "v"),
        ("XADD", "x", "4-0", "f", "v"), ("XADD", "x", "5-0", "f", "v"), ("XTRIM", "x", "MAXLEN", "1"),
        ("XTRIM", "x", "MINID", "0"), ("XDEL", "x", "5-0", "9-0"), ("XADD", "x", "6-0", "f", "v"),
        ("XGROUP", "CREATE", "x", "g", "0"), ("XGROUP", "CREATE", "nx", "g", "$", "MKSTREAM"),
        ("XGROUP", "CREATECONSUMER", "x", "g", "c"), ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"),
        ("XACK", "x", "g", "6-0", "1-0"), ("XGROUP", "SETID", "x", "g", "0"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "x", "nx", ">", ">"),
        ("XCLAIM", "x", "g", "c3", "0", "6-0"), ("XAUTOCLAIM", "x", "g", "c4", "0", "0-0"),
        ("XGROUP", "DELCONSUMER", "x", "g", "c4"), ("XGROUP", "DELCONSUMER", "x", "g", "c"),
        ("XSETID", "x", "100-0"), ("XGROUP", "DESTROY", "x", "g"), ("XGROUP", "DESTROY", "x", "g"),
        ("COPY", "x", "x2"), ("RENAME", "x2", "x3"), ("DUMP:RESTORE", "x", "x4"), ("DEL", "x", "x3", "x4", "nx"),
    ],
}

def pel_reread(cmd: Command) -> bool:
    """XREADGROUP reading some stream's history (an ID other than ">"): no change in
    newest Redis, one per stream served in 7.0, so ours may be less."""
    if str(cmd[0]).upper() != "XREADGROUP":
        return False
    try:
        call = parse_xread(cmd)
    except (ValueError, IndexError):
        return False
    return any(str(i) != ">" for i in call.ids)


class Side:
    """One of the three runs: an executor and its change counter."""

    def __init__(self, execute: Callable[..., Any], dirty: Callable[[], int]) -> None:
        self.execute = execute
        self.dirty = dirty

    def step(self, cmd: Command) -> int:
        before = self.dirty()
        try:
            if cmd[0] == SLEEP:
                time.sleep(int(cmd[1]) / 1000)
            elif cmd[0] == "DUMP:RESTORE":      # the payload is each side's own
                payload = self.execute("DUMP", cmd[1])
                self.execute("RESTORE", cmd[2], "0", payload, *cmd[3:])
            elif cmd[0] == "FUNCTION:RESTORE":
                self.execute("FUNCTION", "RESTORE", self.execute("FUNCTION", "DUMP"), "REPLACE")
            else:
                self.execute(*cmd)
        except ResponseError:
            pass
        return self.dirty() - before


class ExtraReads:
    """The oracle's connection, counting the history reads past the largest ID that
    the newest-Redis emulation adds to create consumers (differential.py,
    _creating_consumers): 7.0 counts each as a change for the stream served, newest
    Redis only the consumer it creates, so each read is one change too many."""

    def __init__(self, inner: RedisOracle) -> None:
        self.inner = inner
        self.count = 0

    def execute(self, *args: Any) -> Any:
        if args and args[-1] == BELOW_MAX_STREAM_ID:
            self.count += 1
        return self.inner.execute(*args)


def server_side(port: int, *, emulate: bool) -> tuple[Side, list[RedisOracle]]:
    """A server's run: commands on one connection (through the newest-Redis emulation
    for the oracle), INFO on another (MULTI would queue it)."""
    conn, info = (RedisOracle("127.0.0.1", port, socket_timeout=10) for _ in range(2))
    extra = ExtraReads(conn)
    runner = NewestRedisEmulation(extra) if emulate else conn

    def dirty() -> int:
        text = info.execute("INFO", "persistence").decode()
        return int(text.split("rdb_changes_since_last_save:")[1].split("\r\n")[0]) - extra.count
    return Side(runner.execute, dirty), [conn, info]


def run_three(sluice_port: int, oracle_port: int, sequence: list[Command], label: str) -> None:
    """Runs sequence on sluice-server, an embedded Engine and the oracle; fails listing
    every command whose step of the change counter differs."""
    from engine import EmbeddedRedis, Engine

    engine = Engine()
    client = EmbeddedRedis(engine, single_connection_client=True)
    client.response_callbacks.clear()       # raw replies, as the servers' connections
    embedded = Side(client.execute_command, lambda: engine.dirty)
    ours, our_conns = server_side(sluice_port, emulate=False)
    theirs, their_conns = server_side(oracle_port, emulate=True)
    try:
        our_conns[0].execute("FLUSHALL")
        their_conns[0].execute("FLUSHALL")
        rows = []
        for index, cmd in enumerate(sequence):
            row = (ours.step(cmd), embedded.step(cmd), theirs.step(cmd))
            if pel_reread(cmd):
                ok = row[0] == row[1] <= row[2]
            else:
                ok = row[0] == row[1] == row[2]
            if not ok:
                rows.append(f"#{index} {cmd!r}: sluice-server {row[0]}, embedded {row[1]}, redis {row[2]}")
        assert not rows, f"[{label}] change counts differ:\n" + "\n".join(rows)
    finally:
        for conn in our_conns + their_conns:
            conn.close()
        client.close()


@pytest.fixture(scope="module")
def sluice():
    """No save points, as the oracle: a save would reset the counter mid-run."""
    with SluiceServer(["--save", ""]) as srv:
        yield srv


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_handwritten_write_commands_count_changes_as_redis_does(name, sluice, redis_server):
    run_three(sluice.port, redis_server[1], SEQUENCES[name], name)


@pytest.mark.parametrize("seed", collection_generator.SEEDS)
@pytest.mark.parametrize("family", ("list", "hash", "set"))
def test_generated_collection_commands_count_changes_as_redis_does(family, seed, sluice, redis_server):
    sequence = collection_generator.generate(seed, 300, (family,))
    run_three(sluice.port, redis_server[1], sequence, f"{family} seed={seed}")


@pytest.mark.parametrize("seed", collection_generator.SEEDS)
def test_generated_stream_commands_count_changes_as_redis_does(seed, sluice, redis_server):
    sequence = command_generator.generate(seed, 300)
    run_three(sluice.port, redis_server[1], sequence, f"streams seed={seed}")


@pytest.mark.parametrize("seed", range(4))
def test_generated_sorted_set_commands_count_changes_as_redis_does(seed, sluice, redis_server):
    rng = random.Random(seed)
    sequence = [tuple(str(a) for a in test_sorted_sets.random_command(rng)) for _ in range(300)]
    run_three(sluice.port, redis_server[1], sequence, f"zset seed={seed}")


SERVED = [  # (blocked command, the command that serves it)
    (("BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"), ("RPUSH", "src", "a", "b")),
    (("BRPOPLPUSH", "src", "dst", "0"), ("LPUSH", "src", "a")),
    (("BLPOP", "src", "0"), ("RPUSH", "src", "a", "b", "c")),
    (("BLMPOP", "0", "1", "src", "LEFT", "COUNT", "2"), ("RPUSH", "src", "a", "b", "c")),
    (("BZPOPMIN", "zsrc", "0"), ("ZADD", "zsrc", "1", "a", "2", "b")),
    (("BZMPOP", "0", "1", "zsrc", "MIN", "COUNT", "5"), ("ZADD", "zsrc", "1", "a", "2", "b")),
    (("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "x", ">"), ("XADD", "x", "5-0", "f", "v")),
]


def served_step(port: int, blocked: Command, serving: Command, *, block: bool) -> int:
    """The change counter's step over `serving` and `blocked`: blocked first and served
    by it (`block`), or run after it, answering at once (what newest Redis counts for
    a served client, which it runs again as a call: #11012)."""
    conn, waiter, info = (RedisOracle("127.0.0.1", port, socket_timeout=10) for _ in range(3))
    try:
        conn.execute("FLUSHALL")
        conn.execute("XGROUP", "CREATE", "x", "g", "$", "MKSTREAM")
        conn.execute("XGROUP", "CREATECONSUMER", "x", "g", "c")

        def dirty() -> int:
            text = info.execute("INFO", "persistence").decode()
            return int(text.split("rdb_changes_since_last_save:")[1].split("\r\n")[0])
        before = dirty()
        if not block:
            conn.execute(*serving)
        waiter.send(*blocked)
        deadline = time.monotonic() + 5
        while block and b"blocked_clients:1" not in info.execute("INFO", "clients"):
            assert time.monotonic() < deadline, "the command did not block"
            time.sleep(0.01)
        if block:
            conn.execute(*serving)
        assert waiter.read() is not None
        return dirty() - before
    finally:
        for c in (conn, waiter, info):
            c.close()


@pytest.mark.parametrize("blocked, serving", SERVED, ids=[b[0] for b, _ in SERVED])
def test_served_blocked_commands_count_changes_as_newest_redis_does(blocked, serving, sluice,
                                                                    redis_server):
    """7.0 counts no change for a served BLPOP, BRPOP, BLMOVE, BRPOPLPUSH or XREADGROUP
    (tests/differential.py, "A served blocked command and the change counter")."""
    ours = served_step(sluice.port, blocked, serving, block=True)
    assert ours == served_step(redis_server[1], blocked, serving, block=False)
    assert ours == served_step(sluice.port, blocked, serving, block=False)


def flushall_with_save_points(port: int) -> list:
    """[counter before FLUSHALL, counter after it, snapshots written by it] with the
    save point 3600 s / 100 changes configured."""
    r = RedisOracle("127.0.0.1", port, socket_timeout=10)
    try:
        def field(name: str) -> int:
            text = r.execute("INFO", "persistence").decode()
            return int(text.split(name + ":")[1].split("\r\n")[0])
        r.execute("CONFIG", "SET", "save", "3600 100")
        r.execute("FLUSHALL")
        r.execute("MSET", "a", "1", "b", "2", "c", "3")
        r.execute("SELECT", "3")
        r.execute("SET", "d", "4")
        before, saves = field("rdb_changes_since_last_save"), field("rdb_saves")
        r.execute("FLUSHALL")
        return [before, field("rdb_changes_since_last_save"), field("rdb_saves") - saves]
    finally:
        r.execute("CONFIG", "SET", "save", "")
        r.close()


def test_flushall_with_save_points_snapshots_and_restarts_the_counter(redis_server, tmp_path):
    """Redis's FLUSHALL writes a snapshot of the emptied keyspace at once when save points
    are configured (the counter starts again from 0); without them it counts one change
    per key (the sequences above)."""
    with SluiceServer(["--save", ""]) as srv:
        ours = flushall_with_save_points(srv.port)
    assert ours == flushall_with_save_points(redis_server[1])
    assert ours[1:] == [0, 0]
    from engine import Engine

    engine = Engine(dir=tmp_path, save=[(3600, 100)])
    try:
        engine.execute("MSET", "a", "1", "b", "2")
        snapshot = Path(engine.durability.snapshot_path)
        assert not snapshot.exists()
        engine.execute("FLUSHALL")
        assert snapshot.exists()
        assert engine.durability.info()["rdb_changes_since_last_save"] == 0
        engine.execute("SET", "a", "1")
        assert engine.durability.info()["rdb_changes_since_last_save"] == 1
    finally:
        engine.close(save=False)
    with Engine(dir=tmp_path, save=[]) as engine:       # the snapshot FLUSHALL wrote
        assert engine.execute("DBSIZE") == 0
