"""EmbeddedRedis: redis-py's own methods against the embedded engine, compared with the
same calls against a real redis-server (7.0), for RESP2 and RESP3, bytes and decoded.

Each scenario runs once per client; every step's result (or the exception it raised,
as class and message) is recorded and the two recordings must match. Clock-dependent
values (idle times, unix-ms times) match within TOLERANCE_MS; fields only newer Redis
reports are dropped (see tests/differential.py, DELIBERATE_DIFFERENCES). XREADGROUP
CLAIM (Redis 8.4) is absent from 7.0 and is checked against its documented behaviour
on a ManualClock.
"""
from __future__ import annotations

import threading
import time

import pytest
import redis
from redis.exceptions import ExecAbortError, ResponseError, WatchError

from engine import Engine, ManualClock
from engine.api.client import EmbeddedConnection, EmbeddedRedis
from differential import newest_unblocked_error

TOLERANCE_MS = 1500
T0 = 1_700_000_000_000
# Idle-type values: milliseconds since something happened.
IDLE_KEYS = {"idle", "time_since_delivered", "seen-time", "delivery-time"}
# Reported only by Redis >= 7.2, the IDMP fields by >= 8.6 (Sluice follows the newest Redis).
NEWER_ONLY_KEYS = {"inactive", "active-time", "idmp-duration", "idmp-maxsize", "pids-tracked",
                   "iids-tracked", "iids-added", "iids-duplicates"}
# Sluice's radix tree is not rax: its node count differs by design.
ANY_KEYS = {"radix-tree-nodes"}


# -- comparing ----------------------------------------------------------------------

def _key(k):
    return k.decode() if isinstance(k, bytes) else k


def _loose_equal(a, b, path="result", idle=False) -> None:
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        assert type(a) is type(b) and str(a) == str(b), f"{path}: {a!r} != {b!r}"
        return
    if isinstance(a, dict) and isinstance(b, dict):
        a = {k: v for k, v in a.items() if _key(k) not in NEWER_ONLY_KEYS}
        b = {k: v for k, v in b.items() if _key(k) not in NEWER_ONLY_KEYS}
        assert list(map(_key, a)) == list(map(_key, b)), f"{path}: keys {list(a)} != {list(b)}"
        for (k, x), y in zip(a.items(), b.values()):
            if _key(k) not in ANY_KEYS:
                _loose_equal(x, y, f"{path}[{k!r}]", _key(k) in IDLE_KEYS)
        return
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _loose_equal(x, y, f"{path}[{i}]", idle)
        return
    if (type(a) is int and type(b) is int
            and (idle or (a > T0 // 2 and b > T0 // 2))):   # idle ms, or a unix-ms time
        assert abs(a - b) <= TOLERANCE_MS, f"{path}: {a} !~ {b}"
        return
    assert type(a) is type(b) and a == b, f"{path}: {a!r} != {b!r}"


class Recorder:
    """Calls steps, keeping each result or raised redis error."""

    def __init__(self) -> None:
        self.results: list = []

    def __call__(self, fn, *args, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except redis.RedisError as err:
            result = err
        self.results.append(result)
        return result


def same(pair, scenario):
    """Runs scenario(client, step) on both clients; the recorded steps must match."""
    recordings = []
    for client in pair:
        step = Recorder()
        scenario(client, step)
        recordings.append(step.results)
    embedded, real = recordings
    assert len(embedded) == len(real)
    for i, (a, b) in enumerate(zip(embedded, real)):
        _loose_equal(a, b, f"step {i}")
    return embedded


def run_on_both(scenario, ours, real) -> tuple:
    """scenario(*clients) on our clients, then on redis-server's: both results, the
    clients closed whatever happens (for scenarios that need clients of their own)."""
    try:
        return scenario(*ours), scenario(*real)
    finally:
        for client in [*ours, *real]:
            client.close()


# -- fixtures -----------------------------------------------------------------------

@pytest.fixture(params=[(2, False), (3, False), (2, True), (3, True)],
                ids=["resp2", "resp3", "resp2-decoded", "resp3-decoded"])
def options(request):
    protocol, decode = request.param
    return {"protocol": protocol, "decode_responses": decode}


@pytest.fixture
def pair(redis_server, options):
    """(EmbeddedRedis on a fresh engine, redis.Redis on the flushed real server)."""
    host, port = redis_server
    real = redis.Redis(host=host, port=port, **options)
    real.flushall()
    embedded = EmbeddedRedis(**options)
    yield embedded, real
    embedded.close()
    real.close()


@pytest.fixture
def pairs2(redis_server, options):
    """Two clients of one embedded engine and two of the real server."""
    host, port = redis_server
    engine = Engine()
    emb = (EmbeddedRedis(engine=engine, **options), EmbeddedRedis(engine=engine, **options))
    real = (redis.Redis(host=host, port=port, **options),
            redis.Redis(host=host, port=port, **options))
    real[0].flushall()
    yield emb, real
    for client in emb + real:
        client.close()


def fill(r, key="s", n=10, start=1):
    for i in range(start, start + n):
        r.xadd(key, {"f": f"v{i}", "n": i}, id=f"{i}-0")


def group_read_by_c1(r, count=None):
    """Six entries in "s" and a group g (created at 0) whose consumer c1 has read the
    first `count` of them (all by default): a PEL to query and claim from."""
    fill(r, n=6)
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c1", {"s": ">"}, count=count)


# -- streams --------------------------------------------------------------------------

def test_xadd_and_reads(pair):
    def scenario(r, step):
        step(r.xadd, "s", {"a": 1, "b": "two"}, id="1-1")
        step(r.xadd, "s", {"a": 2}, id="1-*")
        step(r.xadd, "s", {"a": 3}, id="2-0")
        step(r.xadd, "s", {"a": 4}, id="1-5")                    # not greater: error
        if not r.get_encoder().decode_responses:                  # binary-safe (not UTF-8)
            step(r.xadd, "s", {b"bin\x00": b"\xff\x00"}, id="3-0")
        step(r.xadd, "nokey", {"a": 1}, nomkstream=True)
        step(r.exists, "nokey")
        step(r.xlen, "s")
        step(r.xlen, "nokey")
        step(r.xrange, "s")
        step(r.xrange, "s", min="1-2", max="+", count=2)
        step(r.xrange, "s", min="(1-1", max="2")
        step(r.xrevrange, "s")
        step(r.xrevrange, "s", max="2-0", min="-", count=1)
        step(r.xrange, "nokey")
        step(r.xdel, "s", "1-1", "9-9")
        step(r.xrange, "s")
        step(r.set, "str", "x")
        step(r.xadd, "str", {"a": 1})                           # WRONGTYPE
        step(r.xrange, "s", min="bad")
    same(pair, scenario)


def test_xadd_trimming_and_xtrim(pair):
    def scenario(r, step):
        for i in range(1, 21):
            step(r.xadd, "s", {"n": i}, id=f"{i}-0", maxlen=15)
        step(r.xlen, "s")
        step(r.xadd, "s", {"n": 21}, id="21-0", minid="10-0")
        step(r.xrange, "s", count=2)
        step(r.xtrim, "s", maxlen=5)
        step(r.xtrim, "s", minid="19-0")
        step(r.xrange, "s")
        for i in range(1, 151):
            r.xadd("big", {"n": i}, id=f"{i}-0")
        # approximate trimming only drops whole nodes (100 entries each on both)
        step(r.xtrim, "big", maxlen=30, approximate=True)
        step(r.xlen, "big")
        step(r.xadd, "big", {"n": 151}, id="151-0", maxlen=10, approximate=True)
        step(r.xlen, "big")
        step(r.xtrim, "big", maxlen=10, approximate=False)
        step(r.xrange, "big", count=1)
        step(r.xtrim, "nokey", maxlen=1)
        step(r.xinfo_stream, "s")
    same(pair, scenario)


def test_groups_lifecycle(pair):
    def scenario(r, step):
        step(r.xgroup_create, "s", "g", id="0")                 # no stream: error
        step(r.xgroup_create, "s", "g", id="$", mkstream=True)
        step(r.xgroup_create, "s", "g", id="$")                 # BUSYGROUP
        fill(r, n=5)
        step(r.xgroup_create, "s", "g2", id="2-0", entries_read=2)
        step(r.xgroup_createconsumer, "s", "g", "alice")
        step(r.xgroup_createconsumer, "s", "g", "alice")
        step(r.xgroup_createconsumer, "s", "nog", "alice")
        step(r.xinfo_groups, "s")
        step(r.xinfo_consumers, "s", "g")
        step(r.xgroup_setid, "s", "g", "3-0", entries_read=3)
        step(r.xgroup_setid, "s", "nog", "3-0")
        step(r.xinfo_groups, "s")
        step(r.xreadgroup, "g", "bob", {"s": ">"})
        step(r.xgroup_delconsumer, "s", "g", "bob")             # returns its pending count
        step(r.xgroup_delconsumer, "s", "g", "nobody")
        step(r.xpending, "s", "g")
        step(r.xgroup_destroy, "s", "g2")
        step(r.xgroup_destroy, "s", "g2")
        step(r.xinfo_groups, "s")
    same(pair, scenario)


def test_xreadgroup_and_xack(pair):
    def scenario(r, step):
        fill(r, "a", 6)
        fill(r, "b", 3, start=4)
        step(r.xgroup_create, "a", "g", id="0")
        step(r.xgroup_create, "b", "g", id="0")
        step(r.xreadgroup, "g", "c1", {"a": ">"}, count=2)
        step(r.xreadgroup, "g", "c2", {"a": ">", "b": ">"}, count=2)
        step(r.xreadgroup, "g", "c1", {"a": "0"})               # c1's history
        step(r.xreadgroup, "g", "c1", {"a": "1-0"}, count=1)
        step(r.xreadgroup, "g", "c3", {"a": ">"}, noack=True)
        step(r.xreadgroup, "g", "c3", {"a": ">"})               # nothing left: nil
        step(r.xreadgroup, "g", "c3", {"a": "0"})               # NOACK left no history
        step(r.xreadgroup, "nog", "c1", {"a": ">"})              # NOGROUP
        step(r.xpending, "a", "g")
        step(r.xack, "a", "g", "1-0", "2-0", "9-0")
        step(r.xack, "a", "nog", "3-0")
        step(r.xreadgroup, "g", "c1", {"a": "0"})
        step(r.xpending, "a", "g")
        step(r.xpending, "b", "g")
        step(r.xinfo_consumers, "a", "g")
        step(r.xread, {"a": "0", "b": "5-0"})
        step(r.xread, {"a": "4-0"}, count=1)
        step(r.xread, {"a": "$"})
        step(r.xread, {"a": "6-0", "b": "6-0"}, block=50)        # nothing new: times out
        step(r.xread, {"nokey": "0"})
    same(pair, scenario)


def test_xpending_range(pair):
    def scenario(r, step):
        group_read_by_c1(r, count=4)
        r.xreadgroup("g", "c2", {"s": ">"})
        step(r.xpending_range, "s", "g", min="-", max="+", count=10)
        step(r.xpending_range, "s", "g", min="2-0", max="5-0", count=2)
        step(r.xpending_range, "s", "g", min="-", max="+", count=10, consumername="c2")
        step(r.xpending_range, "s", "g", min="-", max="+", count=10, idle=0)
        step(r.xpending_range, "s", "g", min="-", max="+", count=10, idle=60000)
        step(r.xpending_range, "s", "g", min="-", max="+", count=10, idle=60000,
             consumername="c1")
        step(r.xpending_range, "s", "nog", min="-", max="+", count=10)
        step(r.xpending, "s", "g")
    same(pair, scenario)


def test_xclaim(pair):
    def scenario(r, step):
        group_read_by_c1(r, count=4)
        now = int(time.time() * 1000)
        step(r.xclaim, "s", "g", "c2", 0, ["1-0"])
        step(r.xclaim, "s", "g", "c2", 60000, ["2-0"])          # not idle enough: nothing
        step(r.xclaim, "s", "g", "c2", 0, ["2-0", "3-0"], justid=True)
        step(r.xclaim, "s", "g", "c1", 0, ["4-0"], idle=5000, retrycount=7)
        step(r.xclaim, "s", "g", "c1", 0, ["1-0"], time=now - 8000)
        step(r.xclaim, "s", "g", "c1", 0, ["6-0"])              # not pending: nothing
        step(r.xclaim, "s", "g", "c1", 0, ["6-0"], force=True, justid=True)
        step(r.xclaim, "s", "g", "c1", 0, ["9-0"], force=True)  # no such entry
        step(r.xpending_range, "s", "g", min="-", max="+", count=10)
        step(r.xclaim, "s", "nog", "c1", 0, ["1-0"])
        step(r.xclaim, "s", "g", "c1", 0, ["bad"])
    same(pair, scenario)


def test_xautoclaim(pair):
    def scenario(r, step):
        group_read_by_c1(r)
        r.xdel("s", "3-0")
        step(r.xautoclaim, "s", "g", "c2", 0, start_id="0-0", count=2)
        step(r.xautoclaim, "s", "g", "c2", 0, start_id="2-0", count=3)
        step(r.xautoclaim, "s", "g", "c2", 0, start_id="0-0", justid=True)
        step(r.xautoclaim, "s", "g", "c2", 60000)
        step(r.xautoclaim, "s", "nog", "c2", 0)
        step(r.xpending_range, "s", "g", min="-", max="+", count=10)
    same(pair, scenario)


def test_xinfo_stream_full(pair):
    def scenario(r, step):
        fill(r, n=5)
        r.xgroup_create("s", "g", id="0")
        r.xgroup_create("s", "g2", id="$")
        r.xreadgroup("g", "c1", {"s": ">"}, count=2)
        r.xreadgroup("g", "c2", {"s": ">"}, count=1)
        step(r.xinfo_stream, "s")
        step(r.xinfo_stream, "s", full=True)
        step(r.xinfo_stream, "s", full=True)
        step(r.xinfo_stream, "nokey")
        step(r.xinfo_groups, "s")
        step(r.xinfo_consumers, "s", "g")
        step(r.xinfo_consumers, "s", "nog")
    same(pair, scenario)


# -- keys and strings ---------------------------------------------------------------

def test_strings_and_expiry(pair):
    def scenario(r, step):
        step(r.set, "k", "v")
        step(r.get, "k")
        step(r.get, "missing")
        step(r.set, "k", "w", nx=True)
        step(r.set, "k", "w", xx=True, get=True)
        step(r.set, "n", 10, ex=100)
        step(r.incr, "n")
        step(lambda: r.ttl("n") in (99, 100))                    # seconds left: clock-dependent
        step(r.ttl, "k")
        step(r.ttl, "missing")
        step(r.expire, "k", 50)
        step(lambda: r.ttl("k") in (49, 50))
        step(lambda: 49000 < r.pttl("k") <= 50000)
        step(r.expire, "missing", 50)
        step(r.persist, "k")
        step(r.type, "k")
        step(r.type, "missing")
        step(r.delete, "k", "n", "missing")
        step(r.exists, "k", "n")
        step(r.set, "gone", 1, px=1)
        time.sleep(0.01)
        step(r.get, "gone")
        step(r.incr, "k2", amount=3)
        step(r.execute_command, "SET", "a")                     # arity error
        step(r.execute_command, "NOSUCHCOMMAND", "x")
        step(r.ping)
        step(r.echo, "hello")
        step(r.execute_command, "PING", "x", "y")
    same(pair, scenario)


# -- pipelines and transactions -----------------------------------------------------

def test_pipeline_without_transaction(pair):
    def scenario(r, step):
        pipe = r.pipeline(transaction=False)
        pipe.xadd("s", {"f": 1}, id="1-0").xadd("s", {"f": 2}, id="2-0")
        pipe.xgroup_create("s", "g", id="0").xreadgroup("g", "c", {"s": ">"})
        pipe.set("k", "v").xadd("k", {"f": 1}).get("k").xlen("s")
        step(pipe.execute, raise_on_error=False)
        pipe = r.pipeline(transaction=False)
        pipe.set("k", "w").xadd("k", {"f": 1}).get("k")
        step(pipe.execute)                                        # raises the first error
        step(r.get, "k")                                          # the others ran
    same(pair, scenario)


def test_transactions(pair):
    def scenario(r, step):
        pipe = r.pipeline()
        pipe.xadd("s", {"f": 1}, id="1-0").xlen("s").set("k", "v").incr("k").get("k")
        step(pipe.execute, raise_on_error=False)                  # runtime error in place
        pipe = r.pipeline()
        pipe.set("k", "v").incr("k")
        step(pipe.execute)                                        # raises it
        pipe = r.pipeline()
        pipe.set("k2", "x").execute_command("SET", "k3").xadd("s", {"f": 3}, id="3-0")
        step(pipe.execute)                                        # queue-time error: EXECABORT
        step(r.exists, "k2")                                      # nothing ran
        step(r.xlen, "s")
        pipe = r.pipeline()
        pipe.set("k4", 1).execute_command("NOSUCH")
        step(pipe.execute)
        step(r.exists, "k4")
        with r.pipeline() as pipe:                                # explicit MULTI
            pipe.multi()
            pipe.set("m", 1).incr("m")
            step(pipe.execute)
        step(r.get, "m")
    same(pair, scenario)


def test_transaction_is_a_multi_exec_on_the_connection(pair):
    def scenario(r, step):
        conn = r.connection_pool.get_connection()
        try:
            for args in (["MULTI"], ["MULTI"], ["SET", "a", "1"], ["WATCH", "a"],
                         ["XADD", "a", "*", "f", "v"], ["GET", "a"], ["EXEC"], ["EXEC"],
                         ["DISCARD"], ["MULTI"], ["SET", "a", "2"], ["DISCARD"], ["GET", "a"],
                         ["MULTI"], ["SET", "b"], ["SET", "b", "1"], ["EXEC"], ["GET", "b"]):
                conn.send_command(*args)
                step(conn.read_response)
        finally:
            r.connection_pool.release(conn)
    same(pair, scenario)


def test_watch(pairs2):
    emb, real = pairs2

    def scenario(clients):
        r, other = clients
        step = Recorder()
        r.set("k", 1)
        with r.pipeline() as pipe:                                # untouched: commits
            pipe.watch("k")
            step(pipe.get, "k")
            pipe.multi()
            pipe.set("k", 2)
            step(pipe.execute)
        with r.pipeline() as pipe:                                # changed meanwhile: aborts
            pipe.watch("k", "s")
            other.xadd("s", {"f": 1}, id="1-0")
            pipe.multi()
            pipe.set("k", 3)
            step(pipe.execute)
        with r.pipeline() as pipe:                                # own change counts too
            pipe.watch("k")
            pipe.set("k", 4)
            pipe.multi()
            pipe.set("k", 5)
            step(pipe.execute)
        with r.pipeline() as pipe:                                # UNWATCH forgets
            pipe.watch("k")
            other.set("k", 6)
            pipe.unwatch()
            pipe.multi()
            pipe.set("k", 7)
            step(pipe.execute)
        r.set("e", 1, px=40)                                      # expires while watched
        with r.pipeline() as pipe:
            pipe.watch("e")
            time.sleep(0.08)
            pipe.multi()
            pipe.set("x", 1)
            step(pipe.execute)

        def incr(pipe):
            value = int(pipe.get("k"))
            pipe.multi()
            pipe.set("k", value + 1)
        step(r.transaction, incr, "k")
        step(r.get, "k")
        return step.results

    embedded, expected = scenario(emb), scenario(real)
    _loose_equal(embedded, expected)
    assert any(isinstance(x, WatchError) for x in embedded)


def test_error_classes(pair):
    def scenario(r, step):
        r.xgroup_create("s", "g", id="$", mkstream=True)
        for call in (lambda: r.xgroup_create("s", "g", id="$"),
                     lambda: r.xreadgroup("nog", "c", {"s": ">"}),
                     lambda: r.xadd("s", {"f": 1}, id="0-0"),
                     lambda: r.execute_command("XADD", "s", "NOPE"),
                     lambda: r.execute_command("HELLO", "4"),
                     lambda: r.execute_command("CLIENT", "NOSUCH")):
            try:
                call()
            except redis.RedisError as err:
                step(lambda e=err: (type(e).__name__, str(e)))
        pipe = r.pipeline()
        pipe.set("a", 1).execute_command("SET", "a")
        try:
            pipe.execute()
        except ExecAbortError as err:
            step(lambda e=err: ("ExecAbortError", str(e)))
        except ResponseError as err:                              # redis-py raises the queue error
            step(lambda e=err: (type(e).__name__, str(e)))
    same(pair, scenario)


@pytest.mark.parametrize("protocol", [2, 3])
def test_blocking_reads_wake_on_writes(redis_server, protocol):
    engine = Engine()
    emb = (EmbeddedRedis(engine=engine, protocol=protocol),
           EmbeddedRedis(engine=engine, protocol=protocol))
    real = (redis.Redis(*redis_server, protocol=protocol),
            redis.Redis(*redis_server, protocol=protocol))
    real[0].flushall()

    def scenario(r, other):
        r.xadd("s", {"f": 0}, id="1-0")
        results = []

        def later(fn, *args, **kwargs):
            def run():
                time.sleep(0.1)
                fn(*args, **kwargs)
            threading.Thread(target=run).start()

        later(other.xadd, "s", {"f": 1}, id="2-0")
        start = time.monotonic()
        results.append(r.xread({"s": "$"}, block=5000))
        results.append(0.08 < time.monotonic() - start < 2)
        r.xgroup_create("s", "g", id="$")
        later(other.xadd, "s", {"f": 2}, id="3-0")
        results.append(r.xreadgroup("g", "c", {"s": ">"}, block=0))
        later(other.xadd, "unrelated", {"f": 3}, id="1-0")
        start = time.monotonic()
        results.append(r.xreadgroup("g", "c", {"s": ">"}, block=250))
        results.append(0.2 < time.monotonic() - start < 2)
        # the group, then the stream, goes away (or changes type) while a reader waits
        for remove in (lambda: other.xgroup_destroy("s", "g2"), lambda: other.delete("s"),
                       lambda: other.set("s", "x"), lambda: other.flushall()):
            other.delete("s")
            other.xadd("s", {"f": 1}, id="1-0")
            r.xgroup_create("s", "g2", id="$")
            later(remove)
            try:
                results.append(r.xreadgroup("g2", "c", {"s": ">"}, block=5000))
            except ResponseError as err:
                results.append(str(err))
        return results

    embedded, expected = run_on_both(scenario, emb, real)
    # Redis 7.0's errors for a woken XREADGROUP, as the newest Redis words them
    removals = len(expected) - 4            # destroy the group, DEL, SET, FLUSHALL
    for i, wrong_type in zip(range(removals, len(expected)), (False, False, True, False)):
        expected[i] = newest_unblocked_error(expected[i], "s", "g2", wrong_type=wrong_type)
    _loose_equal(embedded, expected)
    assert embedded[1] and embedded[4]
    assert embedded[-1] == "NOGROUP No such key 's' or consumer group 'g2' in XREADGROUP with " \
        "GROUP option"
    assert embedded[-2].startswith("WRONGTYPE")


# -- RESP3 / handshake / connection-level -------------------------------------------

def test_handshake(pair, options):
    emb, real = pair
    got = emb.connection_pool.get_connection()
    want = real.connection_pool.get_connection()
    try:
        if options["protocol"] == 3:
            meta, ref = got.handshake_metadata, want.handshake_metadata
            assert set(meta) == set(ref)
            key = "proto" if options["decode_responses"] else b"proto"
            assert meta[key] == 3
        else:
            assert got.handshake_metadata is None
    finally:
        emb.connection_pool.release(got)
        real.connection_pool.release(want)

    def scenario(r, step):
        step(r.client_setname, "worker-1")
        step(r.client_getname)
        step(r.execute_command, "CLIENT", "SETNAME", "a b")
        step(r.execute_command, "HELLO", "4")
        step(r.execute_command, "HELLO", "x")
        step(r.execute_command, "EXEC")
        step(r.execute_command, "DISCARD")
        step(r.execute_command, "WATCH")
        step(r.execute_command, "UNWATCH")
    same(pair, scenario)


def test_select_and_db_argument():
    engine = Engine()
    one = EmbeddedRedis(engine=engine, db=1)
    zero = EmbeddedRedis(engine=engine)
    one.set("k", "in-1")
    assert zero.get("k") is None
    assert EmbeddedRedis(engine=engine, db=1).get("k") == b"in-1"
    assert EmbeddedRedis.from_url("redis://localhost:6379/1?decode_responses=True",
                                  engine=engine).get("k") == "in-1"


def test_plain_redis_with_a_pool_of_embedded_connections():
    engine = Engine()
    pool = redis.ConnectionPool(connection_class=EmbeddedConnection, engine=engine,
                                decode_responses=True)
    r = redis.Redis(connection_pool=pool)
    assert r.xadd("s", {"f": "v"}, id="1-0") == "1-0"
    assert r.xrange("s") == [("1-0", {"f": "v"})]
    pipe = r.pipeline()
    assert pipe.xlen("s").get("x").execute() == [1, None]
    assert EmbeddedRedis(engine=engine).xlen("s") == 1


def test_raw_resp_and_single_connection_client():
    r = EmbeddedRedis(single_connection_client=True)
    conn = r.connection
    conn.send_packed_command(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nv1\r\n*2\r\n$3\r\nGE")
    conn.send_packed_command([b"T\r\n$1\r\nk\r\n"])
    assert conn.read_response() == b"OK"
    assert conn.read_response() == b"v1"
    assert conn.read_response(timeout=0) is None                  # nothing pending
    assert r.get("k") == b"v1"
    with pytest.raises(redis.DataError):
        r.set("k", True)
    pipe = r.pipeline(transaction=False)
    pipe.set("a", 1).set("b", object())
    with pytest.raises(redis.DataError):                       # nothing ran, as with a socket
        pipe.execute()
    assert r.exists("a") == 0
    with pytest.raises(TypeError):
        EmbeddedRedis("localhost")


def test_threads_share_one_engine():
    r = EmbeddedRedis()

    def produce(n):
        for i in range(500):
            r.xadd("s", {"t": n, "i": i})

    threads = [threading.Thread(target=produce, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert r.xlen("s") == 2000
    ids = [entry_id for entry_id, _ in r.xrange("s")]
    assert ids == sorted(ids, key=lambda i: tuple(map(int, i.split(b"-"))))


# -- XREADGROUP ... CLAIM (Redis 8.4; not in the 7.0 oracle) -------------------------

@pytest.fixture
def claim(options):
    clock = ManualClock(T0)
    r = EmbeddedRedis(engine=Engine(clock=clock), **options)
    fill(r, n=6)
    r.xgroup_create("s", "g", id="0")
    return r, clock


def _s(r, value):
    return value.decode() if r.get_encoder().decode_responses else value


def test_xreadgroup_claim_takes_idle_entries_first(claim):
    r, clock = claim
    r.xreadgroup("g", "c1", {"s": ">"}, count=3)                 # 1-0 .. 3-0 pending for c1
    clock.advance(5000)
    reply = r.xreadgroup("g", "c2", {"s": ">"}, count=4, claim_min_idle_time=2000)
    entries = reply[_s(r, b"s")][0] if isinstance(reply, dict) else reply[0][1]
    # claimed entries: (id, fields, idle ms, deliveries before this one), oldest first;
    # then new entries fill COUNT with idle 0 and delivery count 0
    assert entries == [
        (_s(r, b"1-0"), {_s(r, b"f"): _s(r, b"v1"), _s(r, b"n"): _s(r, b"1")}, 5000, 1),
        (_s(r, b"2-0"), {_s(r, b"f"): _s(r, b"v2"), _s(r, b"n"): _s(r, b"2")}, 5000, 1),
        (_s(r, b"3-0"), {_s(r, b"f"): _s(r, b"v3"), _s(r, b"n"): _s(r, b"3")}, 5000, 1),
        (_s(r, b"4-0"), {_s(r, b"f"): _s(r, b"v4"), _s(r, b"n"): _s(r, b"4")}, 0, 0),
    ]
    pending = r.xpending_range("s", "g", min="-", max="+", count=10)
    assert [(p["message_id"], p["consumer"], p["times_delivered"]) for p in pending] == [
        (_s(r, b"1-0"), _s(r, b"c2"), 2), (_s(r, b"2-0"), _s(r, b"c2"), 2),
        (_s(r, b"3-0"), _s(r, b"c2"), 2), (_s(r, b"4-0"), _s(r, b"c2"), 1)]
    assert all(p["time_since_delivered"] == 0 for p in pending)


def test_xreadgroup_claim_respects_min_idle_time(claim):
    r, clock = claim
    r.xreadgroup("g", "c1", {"s": ">"})                          # everything pending
    clock.advance(1000)
    assert not r.xreadgroup("g", "c2", {"s": ">"}, claim_min_idle_time=2000)
    clock.advance(1000)                                          # idle == min-idle: claimable
    reply = r.xreadgroup("g", "c2", {"s": ">"}, count=2, claim_min_idle_time=2000)
    entries = reply[_s(r, b"s")][0] if isinstance(reply, dict) else reply[0][1]
    assert [(e[0], e[2], e[3]) for e in entries] == [(_s(r, b"1-0"), 2000, 1),
                                                     (_s(r, b"2-0"), 2000, 1)]


def test_xreadgroup_claim_in_pipeline_and_with_block(claim):
    r, clock = claim
    r.xreadgroup("g", "c1", {"s": ">"}, count=1)
    clock.advance(3000)
    pipe = r.pipeline()
    pipe.xreadgroup("g", "c2", {"s": ">"}, count=1, claim_min_idle_time=1000)
    pipe.xpending("s", "g")
    reply, summary = pipe.execute()
    entries = reply[_s(r, b"s")][0] if isinstance(reply, dict) else reply[0][1]
    assert [(e[0], e[2], e[3]) for e in entries] == [(_s(r, b"1-0"), 3000, 1)]
    assert summary["pending"] == 1
    # nothing idle enough and nothing new: BLOCK waits, then nil
    r.xreadgroup("g", "c3", {"s": ">"})
    start = time.monotonic()
    assert not r.xreadgroup("g", "c3", {"s": ">"}, block=100, claim_min_idle_time=60000)
    assert time.monotonic() - start >= 0.09


def test_block_claim_is_served_by_the_registry_timer():
    """Embedded CLAIM readers wait on the registry of blocked clients' one timer (run
    by the blocked threads): the oldest takes the entry when it becomes claimable, the
    next goes back to waiting and takes it once it is idle again; nothing pending at
    all, only the timeout answers."""
    r = EmbeddedRedis()
    r.xadd("q", {"f": 1}, id="1-0")
    r.xgroup_create("q", "g", id="0")
    r.xreadgroup("g", "c0", {"q": ">"})                          # pending for c0 from now
    t0 = time.monotonic()
    got: dict = {}

    def claimer(name: str) -> None:
        reply = EmbeddedRedis(r.engine).xreadgroup("g", name, {"q": ">"},
                                                   claim_min_idle_time=400, block=3000)
        got[name] = (time.monotonic() - t0, reply)

    first = threading.Thread(target=claimer, args=("c1",))
    first.start()
    time.sleep(0.05)
    second = threading.Thread(target=claimer, args=("c2",))
    second.start()
    first.join(5)
    second.join(5)
    (t1, one), (t2, two) = got["c1"], got["c2"]
    assert one[0][1][0][0] == b"1-0" and one[0][1][0][3] == 1
    assert two[0][1][0][0] == b"1-0" and two[0][1][0][3] == 2
    assert 0.35 < t1 < 0.9 and 0.75 < t2 < 1.6, (t1, t2)
    r.xack("q", "g", "1-0")
    start = time.monotonic()
    assert not r.xreadgroup("g", "c3", {"q": ">"}, claim_min_idle_time=100, block=300)
    assert 0.28 <= time.monotonic() - start < 2
