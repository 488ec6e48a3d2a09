"""Keyspace notifications and WATCH for lists, hashes and sets: the same commands on
sluice-server and redis-server 7.0 publish the same __keyevent@0__ messages (names
as Redis gives them: lpush, rpop, lset, hset, hincrbyfloat, srem, sinterstore, del
when a collection empties...), and a change to a WATCHed collection aborts EXEC."""
from __future__ import annotations

import pytest
import redis

from keyspace_events import keyevents
from servers import SluiceServer

COMMANDS = [
    ("RPUSH", "l", "a", "b", "c"), ("LPUSH", "l", "z"), ("LPUSHX", "nokey", "x"),
    ("LPOP", "l"), ("RPOP", "l", 1), ("LSET", "l", 0, "A"), ("LINSERT", "l", "BEFORE", "A", "q"),
    ("LREM", "l", 0, "q"), ("LTRIM", "l", 0, -1), ("LMOVE", "l", "m", "LEFT", "RIGHT"),
    ("RPOPLPUSH", "m", "m"), ("LMPOP", 1, "m", "LEFT", "COUNT", 5), ("BLPOP", "nokey", "l2", 0.01),
    ("HSET", "h", "a", "1", "b", "2"), ("HSETNX", "h", "c", "3"), ("HINCRBY", "h", "a", 2),
    ("HINCRBYFLOAT", "h", "a", "0.5"), ("HDEL", "h", "a", "zz"), ("HDEL", "h", "b", "c"),
    ("SADD", "s", "1", "2", "3"), ("SREM", "s", "1"), ("SMOVE", "s", "t", "2"),
    ("SPOP", "s", 10), ("SADD", "u", "x"), ("SINTERSTORE", "d", "t", "t"),
    ("SUNIONSTORE", "d", "nokey"), ("SDIFFSTORE", "e", "t", "nokey"), ("SADD", "t", "2"),
    ("DEL", "e"), ("RENAME", "t", "t2"), ("EXPIRE", "t2", 100),
]


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


def test_keyspace_events_match_redis(sluice, redis_server):
    ours = keyevents("127.0.0.1", sluice.port, COMMANDS)
    theirs = keyevents(*redis_server, COMMANDS)
    assert (b"lpush", b"l") in theirs and (b"del", b"h") in theirs
    assert ours == theirs


def test_watch_sees_collection_changes(sluice, redis_server):
    for port in (sluice.port, redis_server[1]):
        client, other = redis.Redis(port=port), redis.Redis(port=port)
        client.flushall()
        for watched, change in ((("l",), ("RPUSH", "l", "x")), (("h",), ("HSET", "h", "f", "v")),
                                (("s",), ("SADD", "s", "m")), (("l",), ("LPOP", "l")),
                                (("d",), ("SUNIONSTORE", "d", "s"))):
            pipe = client.pipeline(transaction=True)
            pipe.watch(*watched)
            other.execute_command(*change)
            pipe.multi()
            pipe.set("marker", 1)
            with pytest.raises(redis.WatchError):
                pipe.execute()
        pipe = client.pipeline(transaction=True)
        pipe.watch("s")
        other.execute_command("SADD", "s", "m")        # already a member: no change
        pipe.multi()
        pipe.set("marker", 1)
        assert pipe.execute() == [True]
        client.close()
        other.close()
