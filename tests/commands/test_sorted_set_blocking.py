"""BZPOPMIN, BZPOPMAX and BZMPOP waiting for a sorted set: the same scenario over real
sockets on sluice-server and on redis-server 7.0 (the replies must be equal), and
in-process on the embedded client; MULTI and scripts never block."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import pytest
import redis

from engine import Engine
from engine.api.client import EmbeddedRedis
from keyspace_events import keyevents
from servers import SluiceServer
from test_differential import script

pytestmark = pytest.mark.slow    # servers, and clients blocked until timeouts

SETTLE_S = 0.3      # long enough for a command sent by another thread to be blocked


def raw(client: redis.Redis) -> redis.Redis:
    client.response_callbacks.clear()
    return client


def scenario(connect: Callable[[], redis.Redis]) -> list:
    """What blocked clients get when sorted sets appear; the observations in order."""
    c1, c2, c3 = connect(), connect(), connect()
    c2.flushall()
    out = []
    with ThreadPoolExecutor(2) as pool:
        # served by a ZADD to the second key
        waiting = pool.submit(c1.execute_command, "BZPOPMIN", "k1", "k2", 5)
        time.sleep(SETTLE_S)
        assert not waiting.done()
        out.append(c2.execute_command("ZADD", "k2", 1, "a", 2, "b"))
        out.append(waiting.result(5))
        out.append(c2.execute_command("ZRANGE", "k2", 0, -1, "WITHSCORES"))
        # a timeout
        started = time.monotonic()
        out.append(c1.execute_command("BZPOPMAX", "nokey", "0.2"))
        assert time.monotonic() - started >= 0.15
        # BZMPOP with COUNT, from the top
        waiting = pool.submit(c1.execute_command, "BZMPOP", 5, 2, "k3", "k4", "MAX", "COUNT", 2)
        time.sleep(SETTLE_S)
        out.append(c2.execute_command("ZADD", "k4", 1, "x", 2, "y", 3, "z"))
        out.append(waiting.result(5))
        # first come, first served
        first = pool.submit(c1.execute_command, "BZPOPMIN", "q", 5)
        time.sleep(SETTLE_S)
        second = pool.submit(c3.execute_command, "BZPOPMAX", "q", 5)
        time.sleep(SETTLE_S)
        out.append(c2.execute_command("ZADD", "q", 1, "only"))
        out.append(first.result(5))
        time.sleep(0.1)
        out.append(second.done())
        out.append(c2.execute_command("ZADD", "q", 2, "next"))
        out.append(second.result(5))
        out.append(c2.execute_command("EXISTS", "q"))
        # a key that becomes another type does not serve the waiter
        waiting = pool.submit(c1.execute_command, "BZPOPMIN", "w", "0.6")
        time.sleep(SETTLE_S)
        out.append(c2.execute_command("SET", "w", "x"))
        out.append(waiting.result(5))
        # nothing blocks inside MULTI: a null reply at once
        pipe = c1.pipeline(transaction=True)
        pipe.execute_command("BZPOPMIN", "empty", 0)
        pipe.execute_command("BZMPOP", 0, 1, "empty", "MIN")
        out.append(pipe.execute())
    for c in (c1, c2, c3):
        c.close()
    return out


EXPECTED = [2, [b"k2", b"a", b"1"], [b"b", b"2"], None, 3, [b"k4", [[b"z", b"3"], [b"y", b"2"]]],
            1, [b"q", b"only", b"1"], False, 1, [b"q", b"next", b"2"], 0, b"OK", None,
            [None, None]]


def test_sluice_server_blocks_as_redis(redis_server):
    with SluiceServer() as srv:
        ours = scenario(lambda: raw(redis.Redis(port=srv.port, protocol=2)))
    theirs = scenario(lambda: raw(redis.Redis(*redis_server, protocol=2)))
    assert ours == theirs == EXPECTED


def test_embedded_clients_block_as_redis():
    engine = Engine()
    assert scenario(lambda: raw(EmbeddedRedis(engine=engine, protocol=2))) == EXPECTED


def test_served_pop_is_logged_as_zpopmin():
    engine = Engine()
    log = []
    engine.add_effect_listener(lambda db, effects: log.extend(effects))
    waiter, writer = raw(EmbeddedRedis(engine=engine, protocol=2)), raw(EmbeddedRedis(engine=engine, protocol=2))
    with ThreadPoolExecutor(2) as pool:
        pop = pool.submit(waiter.execute_command, "BZPOPMAX", "z", 5)
        bzmpop = pool.submit(writer.execute_command, "BZMPOP", 5, 1, "y", "MIN", "COUNT", 3)
        time.sleep(SETTLE_S)
        client = raw(EmbeddedRedis(engine=engine, protocol=2))
        client.execute_command("ZADD", "z", 1, "a", 2, "b")
        client.execute_command("ZADD", "y", 1, "a")
        assert pop.result(5) == [b"z", b"b", b"2"]
        assert bzmpop.result(5) == [b"y", [[b"a", b"1"]]]
    assert log == [[b"ZADD", b"z", b"1.0", b"a", b"2.0", b"b"], [b"ZPOPMAX", b"z", b"1"],
                   [b"ZADD", b"y", b"1.0", b"a"], [b"ZPOPMIN", b"y", b"1"]]


@pytest.mark.parametrize("command", [("BZPOPMIN", "k", 0), ("BZPOPMAX", "k", 0),
                                     ("BZMPOP", 0, 1, "k", "MIN")])
def test_a_script_never_blocks(command):
    """Newest Redis lets scripts call them (no noscript flag): they answer nil there."""
    client = raw(EmbeddedRedis(protocol=2))
    body = "return redis.call(" + ", ".join(f"'{a}'" for a in command) + ")"
    assert client.execute_command("EVAL", body, 0) is None
    client.execute_command("ZADD", "k", 5, "m")
    assert client.execute_command("EVAL", body, 0)[0] == b"k"


# -- keyspace events ---------------------------------------------------------------------

EVENT_COMMANDS = script("""
ZADD z 1 a 2 b 3 c
ZADD z 1 a
ZADD z XX 5 nope
ZINCRBY z 1 a
ZADD z INCR 1 b
ZREM z nope
ZREM z a
ZREMRANGEBYSCORE z 100 200
ZREMRANGEBYSCORE z 0 2.5
ZADD z 1 a 2 b 3 c 4 d
ZREMRANGEBYRANK z 0 0
ZREMRANGEBYLEX z [z +
ZPOPMIN z
ZPOPMAX z 5
ZPOPMIN z
ZADD z 1 a 2 b
ZRANGESTORE dst z 0 0
ZRANGESTORE dst z 5 6
ZRANGESTORE dst z 5 6
ZMPOP 1 z MAX COUNT 1
BZPOPMIN z 1
BZMPOP 1 1 z MIN
ZADD l 0 a 0 b
ZREMRANGEBYLEX l - +
ZADD u 1 a 2 b
SADD s b
ZUNIONSTORE dst 2 u s
ZINTERSTORE dst 2 u s
ZDIFFSTORE dst 2 u s
ZDIFFSTORE dst 2 u u
ZDIFFSTORE dst 2 u u
ZUNION 2 u s
ZINTER 2 u s
ZDIFF 2 u s
ZINTERCARD 2 u s
""")


def test_keyspace_events_as_redis(redis_server):
    with SluiceServer() as srv:
        ours = keyevents("127.0.0.1", srv.port, EVENT_COMMANDS)
    assert ours == keyevents(*redis_server, EVENT_COMMANDS)
    assert (b"zincr", b"z") in ours and (b"zrangestore", b"dst") in ours
