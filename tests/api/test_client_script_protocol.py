"""EmbeddedRedis hands back from EVAL and FCALL what a connection of the same protocol
to redis-server 7.0 reads: with protocol=2 a double is its bulk string, a map a flat
list, true 1, a set a list (also inside EXEC); with protocol=3 the RESP3 types."""
from __future__ import annotations

import pytest
import redis

from engine.api.client import EmbeddedRedis

SCRIPTS = [
    "return {double=3.5}", "return {double=-0.0}", "return {double=1/0}", "return {double=-1/0}",
    "return {map={a=1}}", "return {set={a=true}}", "return {big_number='123'}",
    "return {1, {set={x=true}}, {big_number='-99999999999999999999'}}",
    "redis.setresp(3); return {true, false, redis.call('get', 'missing')}",
    "redis.setresp(3); return redis.call('hgetall', 'h')",
    "redis.setresp(3); return redis.call('zscore', 'z', 'a')",
    "redis.setresp(3); return redis.call('smembers', 's')",
    "redis.setresp(3); return redis.call('zrange', 'z', 0, -1, 'withscores')",
    "return {map={a={double=1.5}, b={true}}}", "redis.setresp(3); return {redis.call('hgetall', 'h')}",
    "return true", "return false", "return 3.99", "return redis.status_reply('FINE')",
]
LIBRARY = """#!lua name=conv
redis.register_function('dbl', function(keys, args) return {double=2.25} end)
redis.register_function('map', function(keys, args) return {map={k={double=0.5}}} end)
redis.register_function('yes', function(keys, args) redis.setresp(3); return true end)
"""


@pytest.fixture(params=[2, 3])
def clients(request, redis_server):
    host, port = redis_server
    ours = EmbeddedRedis(protocol=request.param)
    theirs = redis.Redis(host=host, port=port, protocol=request.param)
    for client in (ours, theirs):
        client.flushall()
        client.function_flush()
        client.hset("h", "f", "v")
        client.zadd("z", {"a": 1.5})
        client.sadd("s", "m")
        client.function_load(LIBRARY)
    yield ours, theirs
    theirs.function_flush()
    theirs.close()
    ours.close()


def both(clients, call) -> list:
    return [call(client) for client in clients]


@pytest.mark.parametrize("script", SCRIPTS)
def test_eval_replies_as_the_connection_protocol(clients, script):
    ours, theirs = both(clients, lambda c: c.eval(script, 0))
    assert repr(ours) == repr(theirs)       # types too: b'3.5' is not 3.5


def test_fcall_and_exec_replies_as_the_connection_protocol(clients):
    for name in ("dbl", "map", "yes"):
        ours, theirs = both(clients, lambda c: c.fcall(name, 0))
        assert repr(ours) == repr(theirs)

    def transaction(client):
        pipe = client.pipeline(transaction=True)
        pipe.eval("return {double=0.5}", 0)
        pipe.eval("return {map={a={true}}}", 0)
        pipe.fcall("dbl", 0)
        return pipe.execute()
    ours, theirs = both(clients, transaction)
    assert repr(ours) == repr(theirs)
