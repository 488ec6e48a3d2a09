"""sluice-server over real sockets: redis-py (sync and asyncio, RESP2 and RESP3),
redis-cli and redis-benchmark against a server started as a subprocess.

The redis-py scenarios of tests/api/test_client.py run here too, against the network
server instead of the embedded client (each one is compared with the same calls
against the real redis-server oracle). Tests that need a special configuration
start a server of their own.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest
import redis
import redis.asyncio as aioredis
from redis.backoff import NoBackoff
from redis.exceptions import ResponseError
from redis.retry import Retry

from engine.api.session import SERVER_VERSION
from engine.commands.table import COMMANDS
from engine.server.info import parse_info
from differential import newest_unblocked_error
from raw_io import raw_call, raw_socket, read_until_closed
from servers import RedisServer, SluiceServer

# The redis-py scenarios of the embedded client, run against the server here (they use
# the `pair`, `pairs2` and `options` fixtures defined below).
from test_client import (  # noqa: F401
    _loose_equal,
    options,
    run_on_both,
    test_error_classes,
    test_groups_lifecycle,
    test_handshake,
    test_pipeline_without_transaction,
    test_strings_and_expiry,
    test_transaction_is_a_multi_exec_on_the_connection,
    test_transactions,
    test_watch,
    test_xadd_and_reads,
    test_xadd_trimming_and_xtrim,
    test_xautoclaim,
    test_xclaim,
    test_xinfo_stream_full,
    test_xpending_range,
    test_xreadgroup_and_xack,
)

NO_RETRY = Retry(NoBackoff(), 0)     # redis-py retries failed connections with backoff
REDIS_CLI = "redis-cli"
REDIS_BENCHMARK = "redis-benchmark"
needs_tools = pytest.mark.skipif(
    (shutil.which(REDIS_CLI) is None or shutil.which(REDIS_BENCHMARK) is None)
    and os.environ.get("CI") != "true",
    reason="redis-cli / redis-benchmark are not installed (`make oracle` installs them)")


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


@pytest.fixture
def pair(sluice, redis_server, options):  # noqa: F811 - `options` comes from test_client
    """(redis.Redis on sluice-server, redis.Redis on the real server), both flushed."""
    ours = redis.Redis(port=sluice.port, **options)
    ours.flushall()
    real = redis.Redis(host=redis_server[0], port=redis_server[1], **options)
    real.flushall()
    yield ours, real
    ours.close()
    real.close()


@pytest.fixture
def pairs2(sluice, redis_server, options):  # noqa: F811
    ours = (redis.Redis(port=sluice.port, **options), redis.Redis(port=sluice.port, **options))
    real = (redis.Redis(host=redis_server[0], port=redis_server[1], **options),
            redis.Redis(host=redis_server[0], port=redis_server[1], **options))
    ours[0].flushall()
    real[0].flushall()
    yield ours, real
    for client in ours + real:
        client.close()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def protocol(request):
    return request.param


@pytest.fixture
def r(sluice, protocol):
    client = redis.Redis(port=sluice.port, protocol=protocol)
    client.flushall()
    yield client
    client.close()


def info(client, section=None) -> dict:
    """INFO as {field: str} (redis-py's info() converts the values)."""
    text = raw_call(client, "INFO", *([section] if section else []))
    return parse_info(text if isinstance(text, bytes) else text.encode())


def entries(reply, key):
    """The entries of `key` in an XREAD/XREADGROUP reply (RESP2 list or RESP3 map)."""
    if isinstance(reply, dict):
        return reply[key][0]
    return dict((k, v) for k, v in reply)[key]


def later(delay: float, fn, *args, **kwargs) -> threading.Thread:
    def run():
        time.sleep(delay)
        fn(*args, **kwargs)
    thread = threading.Thread(target=run)
    thread.start()
    return thread


# -- blocking reads -------------------------------------------------------------------

def test_blocking_reads_wake_on_writes(sluice, redis_server, protocol):
    """The same scenario on sluice-server and on redis-server: XREAD/XREADGROUP BLOCK
    woken by another client, timeouts, the stream or group removed while waiting."""
    def scenario(r, other):
        r.flushall()
        r.xadd("s", {"f": 0}, id="1-0")
        results = []
        t = later(0.1, other.xadd, "s", {"f": 1}, id="2-0")
        start = time.monotonic()
        results.append(r.xread({"s": "$"}, block=5000))
        results.append(0.08 < time.monotonic() - start < 2)
        t.join()
        r.xgroup_create("s", "g", id="$")
        t = later(0.1, other.xadd, "s", {"f": 2}, id="3-0")
        results.append(r.xreadgroup("g", "c", {"s": ">"}, block=0))
        t.join()
        t = later(0.05, other.xadd, "unrelated", {"f": 3}, id="1-0")
        start = time.monotonic()
        results.append(r.xreadgroup("g", "c", {"s": ">"}, block=250))
        results.append(0.2 < time.monotonic() - start < 2)
        t.join()
        t = later(0.05, other.set, "s2", "not a stream")            # XREAD keeps waiting
        results.append(r.xread({"s2": "0-0"}, block=300))
        t.join()
        for remove in (lambda: other.xgroup_destroy("s", "g2"), lambda: other.delete("s"),
                       lambda: other.set("s", "x"), lambda: other.flushall()):
            other.delete("s")
            other.xadd("s", {"f": 1}, id="1-0")
            r.xgroup_create("s", "g2", id="$")
            t = later(0.1, remove)
            try:
                results.append(r.xreadgroup("g2", "c", {"s": ">"}, block=5000))
            except ResponseError as err:
                results.append(str(err))
            t.join()
        return results

    ours = [redis.Redis(port=sluice.port, protocol=protocol) for _ in range(2)]
    real = [redis.Redis(*redis_server, protocol=protocol) for _ in range(2)]
    got, expected = run_on_both(scenario, ours, real)
    removals = len(expected) - 4            # destroy the group, DEL, SET, FLUSHALL
    for i, wrong_type in zip(range(removals, len(expected)), (False, False, True, False)):
        if isinstance(expected[i], str):
            expected[i] = newest_unblocked_error(expected[i], "s", "g2", wrong_type=wrong_type)
    _loose_equal(got, expected)
    assert got[1] and got[4]


def test_blocked_readers_on_keys_that_go_away_match_redis(sluice, redis_server):
    """What a reader blocked on a stream gets when the stream (or its group) is
    removed in other ways than DEL/SET/FLUSHALL: expiry, RENAME, FLUSHDB, UNLINK,
    MULTI/EXEC that deletes and re-creates it or re-creates the group, trimming it
    empty - the same replies (errors, entries or the timeout) as from redis-server,
    with 7.0's errors of a woken XREADGROUP mapped to the newest Redis's (it runs the
    command again: NOGROUP). XREADGROUP (G) and XREAD (R); RESP3 (RESP2 is covered
    above)."""
    removers = [
        ("GR", lambda o: o.pexpire("s", 1)),
        ("GR", lambda o: o.rename("s", "elsewhere")),
        ("G", lambda o: o.flushdb()),
        ("G", lambda o: o.unlink("s")),
        ("GR", lambda o: o.pipeline().delete("s").xadd("s", {"f": 9}, id="5-0").execute()),
        ("G", lambda o: o.pipeline().xgroup_destroy("s", "g").xgroup_create("s", "g", id="$")
         .execute()),
        ("G", lambda o: o.xtrim("s", maxlen=0)),
    ]

    def scenario(r, other):
        results = []
        for kinds, remove in removers:
            for kind in kinds:
                other.flushall()
                other.xadd("s", {"f": 1}, id="1-0")
                other.xgroup_create("s", "g", id="$")
                t = later(0.1, remove, other)
                try:
                    if kind == "G":
                        results.append(r.xreadgroup("g", "c", {"s": ">"}, block=300))
                    else:
                        results.append(r.xread({"s": "$"}, block=300))
                except ResponseError as err:
                    results.append(str(err))
                t.join()
        return results

    ours = [redis.Redis(port=sluice.port, protocol=3) for _ in range(2)]
    real = [redis.Redis(*redis_server, protocol=3) for _ in range(2)]
    got, expected = run_on_both(scenario, ours, real)
    expected = [newest_unblocked_error(x, "s", "g") if isinstance(x, str) else x
                for x in expected]
    assert got == expected
    assert "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option" in got
    assert {"s": [[(b"5-0", {b"f": b"9"})]]} in got or {b"s": [[(b"5-0", {b"f": b"9"})]]} in got


def test_blocked_reader_fifo_dollar_and_info(r, sluice):
    other = redis.Redis(port=sluice.port)
    r.xadd("s", {"f": 0}, id="1-0")
    results = {}

    def reader(name, delay):
        time.sleep(delay)
        client = redis.Redis(port=sluice.port)
        client.client_setname(name)
        results[name] = client.xreadgroup("g", name, {"s": ">"}, count=1, block=3000)
        client.close()

    r.xgroup_create("s", "g", id="$")
    threads = [threading.Thread(target=reader, args=(n, 0.05 * i))
               for i, n in enumerate(["first", "second"])]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 3
    while int(info(other, "clients")["blocked_clients"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert int(info(other, "clients")["blocked_clients"]) == 2
    flags = {c["name"]: c["flags"] for c in other.client_list()}
    assert flags["first"] == "b" and flags["second"] == "b"
    other.xadd("s", {"f": 1}, id="2-0")                          # one entry: the first waiter
    time.sleep(0.1)
    assert results == {"first": [[b"s", [(b"2-0", {b"f": b"1"})]]]}
    other.xadd("s", {"f": 2}, id="3-0")
    for t in threads:
        t.join()
    assert results["second"] == [[b"s", [(b"3-0", {b"f": b"2"})]]]
    assert info(other, "clients")["blocked_clients"] == "0"
    # XREAD $ is the last ID at the moment it blocked: an entry added before the wake-up
    # but after the block is returned
    t = later(0.1, other.xadd, "s", {"f": 3}, id="4-0")
    assert entries(r.xread({"s": "$"}, block=3000), b"s") == [(b"4-0", {b"f": b"3"})]
    t.join()
    other.close()


def test_disconnecting_blocked_client_leaves_nothing(r, sluice):
    s = raw_socket(sluice.port)
    s.sendall(b"*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n$1\r\nk\r\n$1\r\n$\r\n")
    deadline = time.monotonic() + 3
    while info(r, "clients")["blocked_clients"] != "1" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert info(r, "clients")["blocked_clients"] == "1"
    s.close()
    deadline = time.monotonic() + 3
    while info(r, "clients")["blocked_clients"] != "0" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert info(r, "clients")["blocked_clients"] == "0"
    assert r.xadd("k", {"f": 1}) and r.ping()


def test_pipeline_after_a_blocking_read_waits_for_it(r, sluice):
    """Commands pipelined behind a blocked read run after it is answered, in order."""
    s = raw_socket(sluice.port)
    s.sendall(b"*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$4\r\n2000\r\n$7\r\nSTREAMS\r\n$1\r\nk\r\n$1\r\n$\r\n"
              b"*2\r\n$4\r\nECHO\r\n$5\r\nafter\r\n")
    time.sleep(0.15)
    r.xadd("k", {"f": "v"}, id="5-0")
    data = b""
    while not data.endswith(b"after\r\n"):
        data += s.recv(65536)
    assert data == (b"*1\r\n*2\r\n$1\r\nk\r\n*1\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
                    b"$5\r\nafter\r\n")
    s.close()


def test_client_unblock(r, sluice):
    other = redis.Redis(port=sluice.port)
    reader = redis.Redis(port=sluice.port)
    rid = reader.client_id()
    box = {}

    def read():
        try:
            box["reply"] = reader.xread({"nostream": "$"}, block=0)
        except ResponseError as err:
            box["reply"] = str(err)

    for error, expected in ((False, []), (True, "UNBLOCKED client unblocked via CLIENT UNBLOCK")):
        t = threading.Thread(target=read)
        t.start()
        time.sleep(0.1)
        assert other.client_unblock(rid, error=error) == 1
        t.join(3)
        assert box["reply"] == expected
    assert other.client_unblock(rid) == 0
    reader.close()
    other.close()


# -- XREADGROUP ... CLAIM ... BLOCK -------------------------------------------------

def test_block_claim_woken_by_the_timer(r, sluice):
    r.xadd("q", {"f": 1}, id="1-0")
    r.xgroup_create("q", "g", id="0")
    r.xreadgroup("g", "c1", {"q": ">"})                          # pending for c1 from now
    start = time.monotonic()
    reply = r.xreadgroup("g", "c2", {"q": ">"}, claim_min_idle_time=300, block=5000)
    elapsed = time.monotonic() - start
    got = entries(reply, b"q")
    assert [(e[0], e[3]) for e in got] == [(b"1-0", 1)] and got[0][2] >= 300
    assert 0.25 < elapsed < 1.0
    # nothing pending at all: only the timeout answers
    r.xack("q", "g", "1-0")
    start = time.monotonic()
    assert not r.xreadgroup("g", "c2", {"q": ">"}, claim_min_idle_time=100, block=300)
    assert time.monotonic() - start >= 0.28


def test_block_claim_waiters_share_claimable_entries(sluice):
    """Two CLAIM readers, one claimable entry: the first takes it when it becomes
    claimable; the second goes back to waiting and takes it once it is idle again.
    A new entry wakes a CLAIM reader at once."""
    async def main():
        admin = aioredis.Redis(port=sluice.port)
        await admin.flushall()
        await admin.xadd("q", {"f": 1}, id="1-0")
        await admin.xgroup_create("q", "g", id="0")
        await admin.xreadgroup("g", "c0", {"q": ">"})
        t0 = time.monotonic()

        async def claimer(name, delay):
            await asyncio.sleep(delay)
            client = aioredis.Redis(port=sluice.port)
            reply = await client.xreadgroup("g", name, {"q": ">"}, claim_min_idle_time=400,
                                            block=3000)
            await client.aclose()
            return time.monotonic() - t0, reply

        (t1, first), (t2, second) = await asyncio.gather(claimer("c1", 0), claimer("c2", 0.05))
        assert first[0][1][0][0] == b"1-0" and first[0][1][0][3] == 1
        assert second[0][1][0][0] == b"1-0" and second[0][1][0][3] == 2
        assert 0.35 < t1 < 0.9 and 0.75 < t2 < 1.5, (t1, t2)
        # a new entry wakes a CLAIM reader before anything is claimable
        await admin.xack("q", "g", "1-0")
        waiter = asyncio.ensure_future(claimer("c3", 0))
        await asyncio.sleep(0.1)
        start = time.monotonic()
        await admin.xadd("q", {"f": 2}, id="2-0")
        _, reply = await waiter
        assert reply[0][1][0][0] == b"2-0" and tuple(reply[0][1][0][2:]) == (0, 0)
        assert time.monotonic() - start < 0.3
        await admin.aclose()
    asyncio.run(main())


# -- pipelines and asyncio -------------------------------------------------------------

def test_pipeline_of_10k_commands(r):
    pipe = r.pipeline(transaction=False)
    for i in range(10_000):
        pipe.xadd("s", {"i": i}, id=f"{i + 1}-0")
    replies = pipe.execute()
    assert replies == [f"{i + 1}-0".encode() for i in range(10_000)]
    pipe = r.pipeline(transaction=False)
    for i in range(10_000):
        pipe.xrange("s", f"{i + 1}-0", f"{i + 1}-0")
    assert pipe.execute()[9_999] == [(b"10000-0", {b"i": b"9999"})]
    assert r.xlen("s") == 10_000


def test_asyncio_client_pipeline_transaction_and_blocking(sluice, protocol):
    async def main():
        a = aioredis.Redis(port=sluice.port, protocol=protocol, decode_responses=True)
        b = aioredis.Redis(port=sluice.port, protocol=protocol, decode_responses=True)
        await a.flushall()
        pipe = a.pipeline(transaction=False)
        for i in range(10_000):
            pipe.xadd("s", {"i": i})
        ids = await pipe.execute()
        assert len(set(ids)) == 10_000 and await a.xlen("s") == 10_000
        async with a.pipeline(transaction=True) as tx:
            tx.set("k", 1).incr("k").xlen("s")
            assert await tx.execute() == [True, 2, 10_000]
        waiting = asyncio.ensure_future(a.xread({"t": "$"}, block=3000))
        await asyncio.sleep(0.1)
        await b.xadd("t", {"f": "v"}, id="1-0")
        reply = await waiting
        expected = [["t", [("1-0", {"f": "v"})]]]
        assert (reply == expected) if protocol == 2 else (reply == {"t": [[("1-0", {"f": "v"})]]})
        await a.aclose()
        await b.aclose()
    asyncio.run(main())


# -- pub/sub and keyspace notifications ---------------------------------------------

def _messages(ps, n, timeout=2.0):
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        msg = ps.get_message(timeout=0.1)
        if msg is not None:
            out.append(msg)
    return out


def test_pubsub(r, sluice, protocol):
    sub = redis.Redis(port=sluice.port, protocol=protocol)
    ps = sub.pubsub()
    ps.subscribe("news")
    ps.psubscribe("n*")
    assert [m["type"] for m in _messages(ps, 2)] == ["subscribe", "psubscribe"]
    assert r.publish("news", "hello") == 2
    got = _messages(ps, 2)
    assert {(m["type"], m["channel"], m["data"]) for m in got} == {
        ("message", b"news", b"hello"), ("pmessage", b"news", b"hello")}
    assert r.pubsub_channels() == [b"news"]
    assert r.pubsub_numsub("news", "other") == [(b"news", 1), (b"other", 0)]
    assert r.pubsub_numpat() == 1
    assert int(info(r, "stats")["pubsub_channels"]) == 1
    ps.unsubscribe("news")
    ps.punsubscribe()
    _messages(ps, 2)
    assert r.publish("news", "x") == 0
    ps.close()
    sub.close()


def test_keyspace_notifications(r, sluice):
    sub = redis.Redis(port=sluice.port)
    ps = sub.pubsub()
    ps.psubscribe("__key*@0__:*")
    _messages(ps, 1)
    r.config_set("notify-keyspace-events", "KEA")
    try:
        r.xadd("s", {"f": 1}, id="1-0")
        r.xgroup_create("s", "g", id="0")
        r.set("e", 1, px=100)                   # expires by itself: the active expiry
        got = [(m["channel"], m["data"]) for m in _messages(ps, 10, timeout=3)]
        assert got[:4] == [(b"__keyspace@0__:s", b"xadd"), (b"__keyevent@0__:xadd", b"s"),
                           (b"__keyspace@0__:s", b"xgroup-create"),
                           (b"__keyevent@0__:xgroup-create", b"s")]
        assert (b"__keyevent@0__:expired", b"e") in got
        assert (b"__keyspace@0__:e", b"expired") in got
        assert int(info(r, "stats")["expired_keys"]) >= 1
        with r.pipeline() as tx:                              # inside MULTI/EXEC too
            tx.xadd("s", {"f": 9}, id="9-0").delete("s")
            tx.execute()
        assert [(m["channel"], m["data"]) for m in _messages(ps, 4)] == [
            (b"__keyspace@0__:s", b"xadd"), (b"__keyevent@0__:xadd", b"s"),
            (b"__keyspace@0__:s", b"del"), (b"__keyevent@0__:del", b"s")]
        r.config_set("notify-keyspace-events", "Et")          # stream events, keyevent only
        r.xadd("s", {"f": 2}, id="2-0")
        r.set("plain", 1)
        assert [(m["channel"], m["data"]) for m in _messages(ps, 2, timeout=0.5)] == [
            (b"__keyevent@0__:xadd", b"s")]
    finally:
        r.config_set("notify-keyspace-events", "")
        ps.close()
        sub.close()


# every notifying command we support, in forms that notify and forms that do not
# (XCLAIM / XAUTOCLAIM claim something: with nothing to claim Sluice creates the
# consumer, and notifies it, like Redis >= 7.2 - see tests/differential.py)
KEYSPACE_SCRIPT = [
    "XADD s 1-0 f v", "XADD s 2-0 f v", "XADD s 3-0 f v", "XTRIM s MAXLEN 2", "XTRIM s MAXLEN 5",
    "XDEL s 2-0", "XDEL s 99-0", "XADD nomk NOMKSTREAM * f v", "XADD s MAXLEN 1 4-0 f v",
    "XGROUP CREATE s g 0", "XGROUP CREATE s g 0", "XGROUP CREATECONSUMER s g c",
    "XGROUP CREATECONSUMER s g c", "XREADGROUP GROUP g c2 STREAMS s >",
    "XCLAIM s g c3 0 4-0", "XAUTOCLAIM s g c4 0 0", "XACK s g 4-0", "XGROUP SETID s g 0",
    "XGROUP DELCONSUMER s g c", "XSETID s 10-0", "XGROUP DESTROY s g", "XGROUP DESTROY s g",
    "XGROUP CREATE m g $ MKSTREAM", "SET k 1", "SET k 2 NX", "INCR k", "INCRBY k 5", "DECR k",
    "DECRBY k 2", "APPEND a x", "APPEND a y", "GETDEL a", "GETDEL a", "EXPIRE k 100",
    "PERSIST k", "PEXPIRE k 100000", "EXPIREAT k 99999999999", "PEXPIREAT k 99999999999999",
    "RENAME k k2", "RENAMENX k2 k3", "RENAMENX m k3", "SET x 1", "EXPIRE x 0", "DEL k3 nosuch",
    "UNLINK m", "SET gone 1", "SELECT 1", "SET other 1", "DEL other", "SELECT 0",
    "SET e 1 PX 50",
]


def test_keyspace_notifications_match_redis(sluice, redis_server):
    """notify-keyspace-events KEA: the same commands on sluice-server and on
    redis-server publish the same keyspace and keyevent messages, in the same order
    (classes filter them: `Kgx` and `E$` as well)."""
    def run(port, classes):
        admin = redis.Redis(port=port, protocol=2)
        admin.flushall()
        sub = redis.Redis(port=port, protocol=2)
        ps = sub.pubsub()
        ps.psubscribe("__key*@*__:*")
        _messages(ps, 1)
        admin.config_set("notify-keyspace-events", classes)
        try:
            conn = admin.connection_pool.get_connection()
            for line in KEYSPACE_SCRIPT:
                conn.send_command(*line.split())
                try:
                    conn.read_response()
                except ResponseError:
                    pass
            admin.connection_pool.release(conn)
            time.sleep(0.4)                        # "e" expires (actively or lazily)
            assert admin.exists("e") == 0
            got = [(m["channel"], m["data"]) for m in _messages(ps, 500, timeout=0.5)]
        finally:
            admin.config_set("notify-keyspace-events", "")
            ps.close()
            sub.close()
            admin.close()
        return got

    for classes in ("KEA", "Kgx", "E$"):
        ours = run(sluice.port, classes)
        theirs = run(redis_server[1], classes)
        assert ours == theirs, classes
        assert ours                                # the test saw something


# -- INFO, CONFIG, CLIENT, COMMAND -----------------------------------------------------

def test_info_fields(r, sluice):
    r.config_resetstat()
    redis.Redis(port=sluice.port, protocol=2).ping()              # a new connection
    before = info(r, "persistence")
    r.xadd("s", {"f": 1}, id="1-0")
    r.set("k", "v", ex=100)
    with pytest.raises(ResponseError):
        r.xadd("s", {"f": 1}, id="1-0")
    with pytest.raises(ResponseError):
        r.execute_command("XADD", "s")
    with pytest.raises(ResponseError):
        r.execute_command("NOSUCH")
    everything = info(r, "everything")
    assert everything["redis_version"] == SERVER_VERSION.decode() and everything["role"] == "master"
    assert int(everything["tcp_port"]) == sluice.port
    assert int(everything["connected_clients"]) >= 1
    assert everything["blocked_clients"] == "0"
    assert int(everything["used_memory"]) > 0
    assert everything["aof_enabled"] == "0" and everything["loading"] == "0"
    assert int(everything["rdb_changes_since_last_save"]) >= \
        int(before["rdb_changes_since_last_save"]) + 2
    assert int(everything["total_connections_received"]) >= 1
    assert int(everything["total_commands_processed"]) >= 5
    assert "instantaneous_ops_per_sec" in everything
    assert everything["total_error_replies"] == "3"
    assert everything["errorstat_ERR"] == "count=3"
    stat = dict(kv.split("=") for kv in everything["cmdstat_xadd"].split(","))
    assert (stat["calls"], stat["rejected_calls"], stat["failed_calls"]) == ("2", "1", "1")
    assert everything["db0"].startswith("keys=2,expires=1,avg_ttl=")
    assert 90_000 < int(everything["db0"].split("avg_ttl=")[1]) <= 100_000
    assert "cmdstat_nosuch" not in everything
    # the default sections leave out commandstats; unknown sections are empty
    assert "cmdstat_xadd" not in info(r)
    assert info(r, "nosuchsection") == {}
    r.config_resetstat()
    assert info(r, "stats")["total_error_replies"] == "0"
    assert "cmdstat_xadd" not in info(r, "commandstats")


def test_info_latencystats(sluice, redis_server):
    """INFO latencystats: Redis's line per command that ran (failed calls too,
    rejected ones not), p50/p99/p99.9 in usec with 3 decimals, non-decreasing,
    gone after CONFIG RESETSTAT; not in the default sections."""
    import re

    def run(port):
        client = redis.Redis(port=port, protocol=2)
        client.config_resetstat()
        for _ in range(3):
            client.ping()
        client.xadd("lat", {"f": "v"})
        client.config_get("maxclients")
        with pytest.raises(ResponseError):
            client.xadd("lat", {"f": "v"}, id="1-0")           # fails: counted
        with pytest.raises(ResponseError):
            client.execute_command("XLEN")                     # rejected: not counted
        stats = info(client, "latencystats")
        everything = info(client, "everything")
        default = info(client)
        client.config_resetstat()
        after = info(client, "latencystats")
        client.close()
        return stats, everything, default, after

    ours, theirs = run(sluice.port), run(redis_server[1])
    stats, everything, default, after = ours
    assert set(stats) == set(theirs[0]) == {
        "latency_percentiles_usec_ping", "latency_percentiles_usec_xadd",
        "latency_percentiles_usec_config|get", "latency_percentiles_usec_config|resetstat"}
    for value in stats.values():
        m = re.fullmatch(r"p50=(\d+\.\d{3}),p99=(\d+\.\d{3}),p99\.9=(\d+\.\d{3})", value)
        assert m, value
        p50, p99, p999 = map(float, m.groups())
        assert 0 < p50 <= p99 <= p999 < 1_000_000
    assert "latency_percentiles_usec_ping" in everything
    assert not any(k.startswith("latency_") for k in default)
    assert set(after) == set(theirs[3]) == {"latency_percentiles_usec_config|resetstat"}


def test_latency_histogram_matches_hdrhistogram():
    """The percentile of known durations is HdrHistogram's highest equivalent value
    (2 significant digits), the figures redis-server 7.0 printed for them."""
    from engine.api.command_stats import CommandStat, Outcome
    for ns, shown in ((2_000, 2_007), (4_000, 4_015), (14_000, 14_015), (57_000, 57_087),
                      (100, 100), (0, 1), (10 ** 12, 1_002_438_655)):
        stat = CommandStat("x")
        stat.count(ns, Outcome.CALLED)
        assert stat.latency_percentile(50) == shown, ns
    stat = CommandStat("x")
    for ns in [1_000] * 98 + [5_000, 900_000]:
        stat.count(ns, Outcome.CALLED)
    assert (stat.latency_percentile(50), stat.latency_percentile(99),
            stat.latency_percentile(99.9)) == (1_003, 5_023, 901_119)
    assert stat.calls == stat.samples == 100
    stat.count(1, Outcome.FAILED)
    assert stat.failed == 1
    stat.reset()
    assert stat.samples == 0 and stat.latency_percentile(50) == 0


def test_config_get_set_through_the_socket(r, sluice):
    def text(d):
        return {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes)
                                                              else v) for k, v in d.items()}
    assert text(r.config_get("maxclients")) == {"maxclients": "10000"}
    assert text(r.config_get("stream-node-*")) == {"stream-node-max-bytes": "4096",
                                                   "stream-node-max-entries": "100"}
    try:
        assert r.config_set("stream-node-max-entries", 2)
        for i in range(10):
            r.xadd("s", {"f": i}, id=f"{i + 1}-0")
        assert r.xinfo_stream("s")["radix-tree-keys"] == 5
        with pytest.raises(ResponseError, match="Unknown option or number of arguments"):
            r.config_set("nosuch", "1")
        with pytest.raises(ResponseError, match="argument must be 'yes' or 'no'"):
            r.config_set("protected-mode", "maybe")
    finally:
        r.config_set("stream-node-max-entries", 100)
    r.xadd("s2", {"f": 1}, id="1-0")
    assert r.xinfo_stream("s2")["radix-tree-keys"] == 1


def test_client_list_kill_and_names(r, sluice):
    other = raw_socket(sluice.port)
    other.sendall(b"CLIENT SETNAME victim\r\nPING\r\n")
    assert other.recv(100) in (b"+OK\r\n+PONG\r\n", b"+OK\r\n")
    time.sleep(0.05)
    me = r.client_id()
    clients = {c["name"]: c for c in r.client_list()}
    assert clients["victim"]["cmd"] == "ping" and clients["victim"]["db"] == "0"
    victim_id = int(clients["victim"]["id"])
    assert int(r.client_info()["id"]) == me
    assert r.client_kill_filter(_id=victim_id) == 1
    assert read_until_closed(other).endswith(b"") and other.recv(10) == b""
    assert "victim" not in {c["name"] for c in r.client_list()}
    assert r.client_kill_filter(_id=victim_id) == 0
    other.close()


def test_command_introspection(r, sluice):
    count = r.command_count()
    commands = r.command()
    assert len(commands) == count
    assert commands["xadd"]["arity"] == -5 and commands["xadd"]["first_key_pos"] == 1
    assert "write" in commands["xadd"]["flags"]
    keys = r.command_getkeys("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">")
    assert [k.decode() if isinstance(k, bytes) else k for k in keys] == ["a", "b"]
    docs = raw_call(r, "COMMAND", "DOCS", "xadd", "xgroup")      # what redis-cli reads
    if isinstance(docs, list):
        docs = {docs[i]: dict(zip(docs[i + 1][::2], docs[i + 1][1::2]))
                for i in range(0, len(docs), 2)}
    assert docs[b"xadd"][b"group"] == b"stream" and docs[b"xadd"][b"since"] == b"5.0.0"
    assert b"xgroup|create" in dict(zip(docs[b"xgroup"][b"subcommands"][::2],
                                        docs[b"xgroup"][b"subcommands"][1::2])) \
        if isinstance(docs[b"xgroup"][b"subcommands"], list) \
        else b"xgroup|create" in docs[b"xgroup"][b"subcommands"]


def newer_than_7_0(name: bytes) -> bool:
    """Whether the table says the command (or subcommand) came after Redis 7.0."""
    container, _, sub = name.decode().partition("|")
    record = COMMANDS[container.encode()]
    if sub:
        record = record.subcommands[sub.encode()]
    return tuple(int(part) for part in record.since.split(".")) > (7, 0, 99)


def test_command_list_matches_redis_for_stream_commands(r, redis_server):
    """COMMAND LIST names subcommands too (container first), filtered by pattern or
    ACL category; for the stream commands, the same names as redis-server (7.0: the
    newer ones, e.g. 8.2's XDELEX, aside)."""
    real = redis.Redis(*redis_server)
    for filters in (("PATTERN", "x*"), ("ACLCAT", "stream"), ("PATTERN", "xgroup*")):
        ours = raw_call(r, "COMMAND", "LIST", "FILTERBY", *filters)
        assert {name for name in ours if not newer_than_7_0(name)} == \
            set(raw_call(real, "COMMAND", "LIST", "FILTERBY", *filters))
    assert {b"xdelex", b"xackdel"} <= set(raw_call(r, "COMMAND", "LIST", "FILTERBY", "ACLCAT",
                                                   "stream"))
    everything = raw_call(r, "COMMAND", "LIST")
    assert everything.index(b"xgroup|create") == everything.index(b"xgroup") + 1
    assert len(everything) > r.command_count()
    assert raw_call(r, "COMMAND", "LIST", "FILTERBY", "MODULE", "any") == []
    real.close()


def test_connection_commands(sluice, protocol):
    """CLIENT SETINFO / INFO / SETNAME, SELECT with DBSIZE, RESET and QUIT on one
    connection; TIME."""
    import hiredis
    s = raw_socket(sluice.port)
    s.sendall(b"HELLO %d\r\nCLIENT SETINFO LIB-NAME mylib\r\nCLIENT SETINFO LIB-VER 1.2\r\n"
              b"CLIENT SETNAME me\r\nSELECT 3\r\nFLUSHDB\r\nSET a 1\r\nDBSIZE\r\n"
              b"CLIENT INFO\r\nRESET\r\nDBSIZE\r\nCLIENT GETNAME\r\nQUIT\r\n" % protocol)
    reader = hiredis.Reader()
    reader.feed(read_until_closed(s))
    s.close()
    replies = []
    while (reply := reader.gets()) is not False:
        replies.append(reply)
    assert replies[1:8] == [b"OK"] * 6 + [1]
    fields = dict(f.split(b"=", 1) for f in replies[8].split())
    assert (fields[b"name"], fields[b"db"], fields[b"lib-name"], fields[b"lib-ver"],
            fields[b"resp"]) == (b"me", b"3", b"mylib", b"1.2", str(protocol).encode())
    assert replies[9:] == [b"RESET", 0, None, b"OK"]
    client = redis.Redis(port=sluice.port, protocol=protocol)
    times = [client.time() for _ in range(5)]
    assert any(usec % 1000 for _, usec in times)            # microseconds, as Redis
    assert abs(times[0][0] + times[0][1] / 1e6 - time.time()) < 5 and times == sorted(times)
    client.close()


# -- security and limits ----------------------------------------------------------------

def test_protected_mode_decision():
    from engine.server.server import DENIED, protected_mode_refuses
    assert protected_mode_refuses(True, False, "10.1.2.3")
    assert protected_mode_refuses(True, False, "2001:db8::1")
    assert not protected_mode_refuses(True, False, "127.0.0.1")
    assert not protected_mode_refuses(True, False, "127.5.6.7")
    assert not protected_mode_refuses(True, False, "::1")
    assert not protected_mode_refuses(True, False, None)           # a Unix socket
    assert not protected_mode_refuses(True, True, "10.1.2.3")      # a password is set
    assert not protected_mode_refuses(False, False, "10.1.2.3")
    # the refusal is redis-server 7.0's exact text
    binary = shutil.which("redis-server")
    if binary:
        with open(binary, "rb") as f:
            assert DENIED.rstrip(b"\r\n") in f.read()


def non_loopback_ipv4():
    """This machine's address on its default route (no packet is sent), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
        except OSError:
            return None
        ip = s.getsockname()[0]
    return None if ip.startswith("127.") or ip == "0.0.0.0" else ip


def test_protected_mode_refuses_a_non_loopback_client(tmp_path):
    """A client connecting through a non-loopback address gets redis-server's DENIED
    reply and is closed; `protected-mode no` or a password lets it in (NOAUTH, then
    AUTH; a wrong password is WRONGPASS)."""
    ip = non_loopback_ipv4()
    if ip is None:
        pytest.skip(reason="no non-loopback IPv4 address on this machine")
    with RedisServer(["--bind", "127.0.0.1", ip, "--save", "", "--appendonly", "no"],
                     workdir=tmp_path) as oracle, SluiceServer(["--bind", "127.0.0.1", ip]) as srv:
        redis_port = oracle.port

        def remote(port, data=b"PING\r\n"):
            s = socket.create_connection((ip, port))
            s.sendall(data)
            out = read_until_closed(s, limit=0.5)
            s.close()
            return out

        refused = remote(srv.port)
        assert refused.startswith(b"-DENIED Redis is running in protected mode")
        assert refused == remote(redis_port)
        for port in (srv.port, redis_port):
            admin = redis.Redis(port=port)
            assert admin.config_set("protected-mode", "no")
            assert remote(port) == b"+PONG\r\n"
            assert admin.config_set("protected-mode", "yes")
            assert admin.config_set("requirepass", "pw")
            assert remote(port, b"PING\r\nAUTH nope\r\nAUTH pw\r\nPING\r\n") == (
                b"-NOAUTH Authentication required.\r\n-WRONGPASS invalid username-password "
                b"pair or user is disabled.\r\n+OK\r\n+PONG\r\n")
            admin.close()
        for port in (srv.port, redis_port):             # counted, as in Redis
            assert info(redis.Redis(port=port, password="pw"),
                        "stats")["rejected_connections"] == "1"


def test_requirepass_with_redis_py():
    with SluiceServer(["--requirepass", "s3cret"]) as srv:
        for protocol in (2, 3):
            with pytest.raises(redis.AuthenticationError):
                redis.Redis(port=srv.port, protocol=protocol, retry=NO_RETRY).ping()
            with pytest.raises(redis.AuthenticationError):
                redis.Redis(port=srv.port, protocol=protocol, password="wrong",
                            retry=NO_RETRY).ping()
            good = redis.Redis(port=srv.port, protocol=protocol, password="s3cret")
            assert good.ping() and good.xadd("s", {"f": 1})
            good.close()
        admin = redis.Redis(port=srv.port, password="s3cret")
        assert admin.config_set("requirepass", "")
        assert redis.Redis(port=srv.port).ping()                  # no password any more
        assert admin.config_set("requirepass", "other")
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=srv.port, retry=NO_RETRY).ping()
        assert admin.ping()                                       # still authenticated
        admin.close()


def test_maxclients():
    with SluiceServer(["--maxclients", "2"]) as srv:
        keep = [raw_socket(srv.port) for _ in range(2)]
        for s in keep:
            s.sendall(b"PING\r\n")
            assert s.recv(100) == b"+PONG\r\n"
        extra = raw_socket(srv.port)
        assert read_until_closed(extra) == b"-ERR max number of clients reached\r\n"
        keep[0].sendall(b"INFO stats\r\n")
        time.sleep(0.1)
        assert b"rejected_connections:1\r\n" in keep[0].recv(65536)
        keep[0].sendall(b"CONFIG SET maxclients 3\r\n")          # applies to the next ones
        assert keep[0].recv(100) == b"+OK\r\n"
        third = raw_socket(srv.port)
        third.sendall(b"PING\r\n")
        assert third.recv(100) == b"+PONG\r\n"
        assert read_until_closed(raw_socket(srv.port)) == b"-ERR max number of clients reached\r\n"
        for s in keep + [extra, third]:
            s.close()


def test_huge_bulk_and_protocol_errors_close_the_connection(sluice):
    s = raw_socket(sluice.port)
    s.sendall(b"*2\r\n$4\r\nECHO\r\n$4294967296\r\n")
    assert read_until_closed(s) == b"-ERR Protocol error: invalid bulk length\r\n"
    s.close()
    s = raw_socket(sluice.port)
    s.sendall(b"PING\r\n*1\r\n$4\r\nPING\r\n\x01~ garbage\r\n*-x\r\n")
    assert read_until_closed(s) == (b"+PONG\r\n+PONG\r\n-ERR unknown command '\x01~', "
                                    b"with args beginning with: 'garbage' \r\n"
                                    b"-ERR Protocol error: invalid multibulk length\r\n")
    s.close()


def test_query_buffer_limit_closes_without_reply(r, sluice):
    assert r.config_set("client-query-buffer-limit", "1mb")
    try:
        s = raw_socket(sluice.port)
        s.sendall(b"*2\r\n$4\r\nECHO\r\n$2000000\r\n" + b"x" * 1_200_000)
        assert read_until_closed(s) == b""
        s.close()
        assert "Closing client that reached max query buffer length" in sluice.log_text()
        assert r.ping()
    finally:
        r.config_set("client-query-buffer-limit", "1gb")


def test_config_set_port_moves_the_listener():
    from servers import free_port
    with SluiceServer() as srv:
        admin = redis.Redis(port=srv.port, protocol=2)
        new_port = free_port()
        assert admin.config_set("port", new_port)
        time.sleep(0.2)
        assert redis.Redis(port=new_port, protocol=2).ping()
        with pytest.raises(redis.ConnectionError):
            redis.Redis(port=srv.port, protocol=2, retry=NO_RETRY).ping()
        assert admin.ping()                                 # existing clients stay
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(ResponseError, match="Unable to listen on this port"):
            admin.config_set("port", busy.getsockname()[1])
        assert admin.config_get("port") == {"port": str(new_port)}
        busy.close()
        admin.close()


XRANGE_BIG = b"*4\r\n$6\r\nXRANGE\r\n$3\r\nbig\r\n$1\r\n-\r\n$1\r\n+\r\n"


def _big_stream_and_slow_reader(good, port: int) -> socket.socket:
    """Fills "big" with 200 entries of 1 kB (one XRANGE of it is a ~200 kB reply) and
    opens a socket with a 4 kB receive buffer: a client whose replies back up."""
    pipe = good.pipeline(transaction=False)
    for i in range(200):
        pipe.xadd("big", {"payload": "x" * 1000}, id=f"{i + 1}-0")
    pipe.execute()
    hog = socket.create_connection(("127.0.0.1", port))
    hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    return hog


def test_slow_reader_hits_the_hard_output_limit():
    """A client that never reads while the server sends it big replies is disconnected
    at the hard limit; a well-behaved client keeps getting correct answers."""
    args = ["--client-output-buffer-limit", "normal", "4mb", "2mb", "10"]
    with SluiceServer(args) as srv:
        good = redis.Redis(port=srv.port)
        hog = _big_stream_and_slow_reader(good, srv.port)
        try:
            for _ in range(400):                # ~80 MB of replies, never read
                hog.sendall(XRANGE_BIG)
        except OSError:
            pass                                # closed by the server meanwhile
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert good.xlen("big") == 200 and good.ping()
            if int(info(good, "clients")["connected_clients"]) == 1:
                break
            time.sleep(0.05)
        assert int(info(good, "clients")["connected_clients"]) == 1
        assert "overcoming of output buffer limits" in srv.log_text()
        hog.close()
        good.close()


def test_reader_that_never_reads_does_not_grow_server_memory(sluice):
    """Without an output limit (the default for normal clients) the server stops
    reading from a client whose replies back up: its buffered output stays bounded."""
    good = redis.Redis(port=sluice.port)
    good.flushall()
    hog = _big_stream_and_slow_reader(good, sluice.port)
    hog.setblocking(False)
    request = XRANGE_BIG * 50
    sent = 0
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and sent < 2000 * len(request) // 50:
        try:
            sent += hog.send(request)
        except BlockingIOError:
            time.sleep(0.05)
    time.sleep(0.3)
    hogs = [c for c in good.client_list() if c["cmd"] == "xrange"]
    assert len(hogs) == 1
    assert int(hogs[0]["omem"]) < 8 * 1024 * 1024                 # bounded, not ~400 MB
    assert good.xlen("big") == 200 and good.ping()
    hog.close()
    good.close()


def test_idle_client_timeout():
    with SluiceServer(["--timeout", "1"]) as srv:
        idle = raw_socket(srv.port)
        idle.sendall(b"PING\r\n")
        assert idle.recv(100) == b"+PONG\r\n"
        start = time.monotonic()
        assert read_until_closed(idle, limit=5) == b""
        assert 0.9 < time.monotonic() - start < 4
        idle.close()


# -- tools: redis-cli and redis-benchmark ----------------------------------------------

def _cli(port, *args, stdin=None) -> str:
    return subprocess.run([REDIS_CLI, "-p", str(port), *args], input=stdin, capture_output=True,
                          timeout=60, check=True).stdout.decode()


@needs_tools
def test_redis_cli_output_matches_redis(sluice, redis_server):
    commands = [["XADD", "s", "1-0", "f", "v", "g", "w"], ["XADD", "s", "2-0", "f", "x"],
                ["XRANGE", "s", "-", "+"], ["XLEN", "s"], ["XGROUP", "CREATE", "s", "g", "0"],
                ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"],
                ["XPENDING", "s", "g"], ["GET", "nokey"], ["XADD", "s", "1-0", "f", "v"],
                ["SET", "k", "v"], ["TYPE", "k"], ["DBSIZE"], ["PING"], ["ECHO", "a b"]]
    for mode in ([], ["--raw"], ["--no-raw"]):
        _cli(sluice.port, "FLUSHALL")
        _cli(redis_server[1], "FLUSHALL")
        for cmd in commands:
            assert _cli(sluice.port, *mode, *cmd) == _cli(redis_server[1], *mode, *cmd), cmd


@needs_tools
def test_redis_cli_pipe_mass_insertion(sluice, redis_server):
    """`redis-cli --pipe`: 10,000 XADDs, a few bad commands among them; the same
    report (error lines, counts) as against redis-server, and the data is there."""
    data = b"".join(b"*5\r\n$4\r\nXADD\r\n$4\r\nmass\r\n$1\r\n*\r\n$1\r\ni\r\n$%d\r\n%d\r\n"
                    % (len(str(i)), i) for i in range(10_000))
    data += b"*2\r\n$4\r\nXLEN\r\n$4\r\nmass\r\n*1\r\n$4\r\nNOPE\r\n"
    data += b"*3\r\n$3\r\nSET\r\n$4\r\nmass\r\n$1\r\nx\r\n*2\r\n$4\r\nXLEN\r\n$4\r\nmass\r\n"
    data += b"*4\r\n$4\r\nXADD\r\n$4\r\nmass\r\n$1\r\n*\r\n$1\r\nf\r\n"
    outputs = []
    for port in (sluice.port, redis_server[1]):
        _cli(port, "FLUSHALL")
        run = subprocess.run([REDIS_CLI, "-p", str(port), "--pipe"], input=data,
                             capture_output=True, timeout=60)
        assert run.returncode == 1                       # redis-cli: errors were seen
        outputs.append(run.stdout)
        assert _cli(port, "GET", "mass").strip() == "x"
    assert outputs[0] == outputs[1]
    assert b"errors: 3, replies: 10005" in outputs[0]


@needs_tools
def test_redis_benchmark(sluice):
    _cli(sluice.port, "FLUSHALL")
    out = subprocess.run([REDIS_BENCHMARK, "-p", str(sluice.port), "-n", "20000", "-q",
                          "-t", "ping,set,get"], capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode() + out.stderr.decode()
    assert "ERR" not in text and "rror" not in text
    for test in ("PING_INLINE", "PING_MBULK", "SET", "GET"):
        assert f"{test}: " in text
    out = subprocess.run([REDIS_BENCHMARK, "-p", str(sluice.port), "-n", "20000", "-q",
                          "XADD", "s", "*", "f", "v"], capture_output=True, timeout=120)
    assert out.returncode == 0 and b"ERR" not in out.stdout + out.stderr
    assert _cli(sluice.port, "XLEN", "s").strip() == "20000"


# -- process lifecycle -------------------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_shuts_down_cleanly(tmp_path, sig):
    pidfile = tmp_path / "sluice.pid"
    sock = tmp_path / "sluice.sock"
    srv = SluiceServer(["--pidfile", str(pidfile), "--unixsocket", str(sock)]).start()
    try:
        assert pidfile.read_text().strip() == str(srv.proc.pid)
        unix = redis.Redis(unix_socket_path=str(sock))
        assert unix.ping() and unix.xadd("s", {"f": 1})
        blocked = raw_socket(srv.port)                               # a client mid-BLOCK
        blocked.sendall(b"XREAD BLOCK 0 STREAMS nothing $\r\n")
        time.sleep(0.1)
        assert srv.stop(sig) == 0
        assert read_until_closed(blocked) == b""
        log = srv.log_text()
        assert "Ready to accept connections tcp" in log
        assert "Ready to accept connections unix" in log
        assert f"Received {sig.name} scheduling shutdown" in log and "bye bye" in log
        assert not pidfile.exists() and not sock.exists()
        unix.close()
        blocked.close()
    finally:
        srv.close()


def test_shutdown_command(tmp_path):
    srv = SluiceServer().start()
    try:
        client = redis.Redis(port=srv.port, retry=NO_RETRY)
        client.shutdown(nosave=True)             # redis-py expects the connection to close
        srv.proc.wait(timeout=10)
        assert srv.proc.returncode == 0
    finally:
        srv.close()


def test_console_script_and_bad_config(tmp_path):
    script = os.path.join(os.path.dirname(os.path.realpath(os.sys.executable)), "sluice-server")
    exe = [script] if os.path.exists(script) else [os.sys.executable, "-m", "engine.server"]
    out = subprocess.run([*exe, "--version"], capture_output=True, timeout=30)
    assert out.returncode == 0 and b"Sluice server v=" in out.stdout
    out = subprocess.run([*exe, "--port", "notaport"], capture_output=True, timeout=30)
    assert out.returncode == 1 and b"FATAL CONFIG FILE ERROR" in out.stderr
