"""notify-keyspace-events `n`: the `new` event of every key a command creates, on the
channels, for the commands and in the order (before the command's own events) that
redis-server 7.0 publishes it; `A` does not include it."""
from __future__ import annotations

import time

import pytest
import redis

from keyspace_events import notifications
from servers import SluiceServer

CREATING = [
    ("SET", "s", "1"), ("SET", "s", "2"), ("SETNX", "s2", "x"), ("MSET", "m1", "a", "m2", "b"),
    ("MSETNX", "m3", "a", "m4", "b"), ("INCR", "i"), ("INCRBYFLOAT", "f", "1.5"),
    ("APPEND", "a", "x"), ("SETRANGE", "r", 2, "x"), ("GETSET", "g", "v"),
    ("SETEX", "e", 100, "v"), ("RPUSH", "l", "a", "b", "c"), ("LPUSH", "l", "z"),
    ("LMOVE", "l", "l2", "LEFT", "RIGHT"), ("RPOPLPUSH", "l", "l3"),
    ("HSET", "h", "a", "1"), ("HINCRBY", "h2", "a", 1), ("SADD", "st", "1", "2"),
    ("SMOVE", "st", "st2", "1"), ("SUNIONSTORE", "su", "st", "st2"), ("SUNIONSTORE", "su", "st"),
    ("SINTERSTORE", "su", "st", "st"), ("SDIFFSTORE", "su", "nokey"),
    ("ZADD", "z", 1, "a", 2, "b"), ("ZINCRBY", "z2", 1, "a"), ("ZUNIONSTORE", "zu", 1, "z"),
    ("ZRANGESTORE", "zr", "z", 0, -1),
    ("ZUNIONSTORE", "zu", 1, "z"), ("ZRANGESTORE", "zr", "z", 0, 0), ("XADD", "x", "1-1", "f", "v"),
    ("XGROUP", "CREATE", "x2", "g", "$", "MKSTREAM"), 
    ("SORT", "l", "ALPHA", "STORE", "sorted"),
    ("SORT", "l", "ALPHA", "STORE", "sorted"), ("SORT", "nokey", "STORE", "sorted"),
    ("RENAME", "s", "s3"), ("RENAME", "s3", "m1"), ("RENAMENX", "m2", "m5"),
    ("COPY", "m5", "c1"), ("COPY", "m5", "c1", "REPLACE"), ("COPY", "m5", "c2", "DB", 1),
    ("MOVE", "c1", 1), ("LPUSHX", "nokey", "x"),
    ("RPUSH", "dup", "x"), ("DEL", "dup"), ("RPUSH", "dup", "y"),
]


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


@pytest.mark.parametrize("classes", ["KEA", "KEAn", "En", "Kn", "KEg$n"])
def test_new_key_events_match_redis(sluice, redis_server, classes):
    ours = notifications("127.0.0.1", sluice.port, CREATING, classes, "__key*@*__:*")
    theirs = notifications(*redis_server, CREATING, classes, "__key*@*__:*")
    if "n" in classes:          # the oracle fires them: the comparison is not vacuous
        assert ((b"__keyevent@1__:new", b"c2") in theirs if "E" in classes
                else (b"__keyspace@0__:l2", b"new") in theirs)
    else:
        assert not any(b"new" in pair for pair in theirs)
    assert ours == theirs


def test_dump_restore_creates(sluice, redis_server):
    def run(host, port):
        client = redis.Redis(host=host, port=port)
        client.flushall()
        client.set("src", "v")
        payload = client.dump("src")
        return notifications(host, port, [("SET", "src", "v"),
                                          ("RESTORE", "dst", 0, payload),
                                          ("RESTORE", "dst", 0, payload, "REPLACE")],
                             "KEAn", "__key*@*__:*")
    assert run("127.0.0.1", sluice.port) == run(*redis_server)


def lazily_expired_then_written(port: int) -> list:
    """A write to a key whose TTL has passed: its `expired` event, then the `new` one,
    then the write's, in Redis's order (whether the lookup or the active cycle found it)."""
    client = redis.Redis(port=port)
    client.flushall()
    client.config_set("notify-keyspace-events", "KEAn")
    listener = client.pubsub()
    listener.psubscribe("__keyevent@0__:*")
    listener.get_message(timeout=1)
    for command in (("SET", "k", "v", "PX", 1), ("RPUSH", "l", "a"), ("PEXPIRE", "l", 1)):
        client.execute_command(*command)
    time.sleep(0.05)
    client.execute_command("SET", "k", "v2")
    client.execute_command("RPUSH", "l", "b")
    client.execute_command("DEL", "k", "l")
    seen = []
    while len(seen) < 14 and (message := listener.get_message(timeout=2)) is not None:
        if message["type"] == "pmessage":
            seen.append((message["channel"], message["data"]))
    listener.close()
    client.config_set("notify-keyspace-events", "")
    client.close()
    return seen


def test_expired_fires_before_the_new_key(sluice, redis_server):
    ours = lazily_expired_then_written(sluice.port)
    theirs = lazily_expired_then_written(redis_server[1])
    for key in (b"k", b"l"):    # each key's own (the active cycle may come in between)
        mine, redis_own = ([event for event, which in seen if which == key]
                           for seen in (ours, theirs))
        assert redis_own[3:5] == [b"__keyevent@0__:expired", b"__keyevent@0__:new"]
        assert mine == redis_own
    assert len(ours) == len(theirs)
