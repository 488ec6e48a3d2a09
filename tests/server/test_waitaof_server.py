"""WAITAOF on sluice-server: the standalone cases of Redis's tests/unit/wait.tcl ("wait
aof network" tags) ported, and what they leave out - each fsync policy's timing, the
reply at a timeout when replicas are asked for (Sluice has none, as a Redis master
without replicas), pipelines, MULTI, scripts, CLIENT UNBLOCK, commandstats.

redis-server 7.0 (the oracle) has no WAITAOF (7.2.0, src/commands/waitaof.json): these
are not differential; tests/differential.py lists the difference. The durability the
reply promises is proven by cutting the power in tests/persist/test_power_loss.py."""
from __future__ import annotations

import time
from typing import Iterator

import pytest
import redis

from redis_units import Conn
from servers import SluiceServer

AOF_OFF = "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled."
EVERYSEC_BOUND_S = 3.0      # the sync thread fsyncs once a second; slack for a busy machine


@pytest.fixture(scope="module")
def sluice() -> Iterator[SluiceServer]:
    with SluiceServer(["--appendonly", "yes", "--save", "",
                       "--auto-aof-rewrite-percentage", "0"]) as srv:
        yield srv


@pytest.fixture
def r(sluice: SluiceServer) -> Iterator[Conn]:
    """A connection to the emptied server, with the AOF on under everysec."""
    conn = Conn(sluice.port)
    conn("CONFIG", "SET", "appendonly", "yes")
    conn("CONFIG", "SET", "appendfsync", "everysec")
    conn("FLUSHALL")
    yield conn
    conn("CONFIG", "SET", "appendonly", "yes")
    conn.close()


def timed(call, *args) -> tuple:
    started = time.monotonic()
    reply = call(*args)
    return reply, time.monotonic() - started


# -- wait.tcl -----------------------------------------------------------------------------

def test_waitaof_local_copy_before_fsync(r):
    r("CONFIG", "SET", "appendfsync", "no")
    r("INCR", "foo")
    reply, took = timed(r, "WAITAOF", 1, 0, 50)
    assert reply == [0, 0] and took >= 0.045            # exits on timeout


def test_waitaof_local_copy_everysec(r):
    r("INCR", "foo")
    reply, took = timed(r, "WAITAOF", 1, 0, 0)
    assert reply == [1, 0] and took < EVERYSEC_BOUND_S


def test_waitaof_local_copy_with_appendfsync_always(r):
    r("CONFIG", "SET", "appendfsync", "always")
    r("INCR", "foo")
    reply, took = timed(r, "WAITAOF", 1, 0, 0)
    assert reply == [1, 0] and took < 0.5


def test_waitaof_local_wait_and_then_stop_aof(r):
    r("CONFIG", "SET", "appendfsync", "no")     # (everysec might answer first)
    rd = r.deferred()
    rd.send("INCR", "foo")
    assert rd.read() == 1
    rd.send("WAITAOF", 1, 0, 0)
    r.wait_for_blocked_clients_count(1)
    r("CONFIG", "SET", "appendonly", "no")      # releases the blocked client as an error
    assert rd.read() == "!" + AOF_OFF
    assert r.s("blocked_clients") == "0"
    rd.close()


def test_waitaof_local_on_server_with_aof_disabled(r):
    r("CONFIG", "SET", "appendonly", "no")
    r("INCR", "foo")
    assert r.error("WAITAOF", 1, 0, 0) == AOF_OFF


def test_waitaof_local_if_aof_turned_on_at_runtime(r):
    """wait.tcl's "WAITAOF local if AOFRW was postponed": Sluice writes the new AOF's
    base when CONFIG SET turns it on (no rewrite to postpone), and a write made after
    is answered once the sync thread fsyncs it."""
    r("CONFIG", "SET", "appendonly", "no")
    r("SET", "x", "y")
    r("CONFIG", "SET", "appendonly", "yes")
    r("SET", "x", "y")
    assert r("WAITAOF", 1, 0, 10000) == [1, 0]


def test_waitaof_master_isnt_configured_to_do_aof(r):
    """Redis's case asks a replica (no local AOF: [0, 1]); with none, the replica
    count is 0 at the timeout."""
    r("CONFIG", "SET", "appendonly", "no")
    r("INCR", "foo")
    assert r("WAITAOF", 0, 0, 0) == [0, 0]
    reply, took = timed(r, "WAITAOF", 0, 1, 100)
    assert reply == [0, 0] and took >= 0.095


def test_waitaof_client_that_sent_no_write_command(r):
    """wait.tcl's "master client didn't send any write command / any command": a client
    with nothing written has all its writes on disk, whatever the policy."""
    r("CONFIG", "SET", "appendfsync", "no")
    r("INCR", "foo")                            # another client's write, never fsynced
    fresh = Conn(r.port)
    try:
        reply, took = timed(fresh, "WAITAOF", 1, 0, 0)
        assert reply == [1, 0] and took < 0.5
        fresh("GET", "foo")                     # a read is no write either
        assert fresh("WAITAOF", 1, 0, 0) == [1, 0]
    finally:
        fresh.close()


def test_waitaof_multiple_clients_unblock(r):
    """wait.tcl's "multiple clients unblock - reuse last result", on the local fsync:
    two clients wait under `no`; the fsync of switching to everysec answers both."""
    r("CONFIG", "SET", "appendfsync", "no")
    rd, rd2 = r.deferred(), r.deferred()
    for client in (rd, rd2):
        client.send("INCR", "foo")
        client.read()
        client.send("WAITAOF", 1, 0, 0)
    r.wait_for_blocked_clients_count(2)
    r("CONFIG", "SET", "appendfsync", "everysec")   # fsyncs what was written
    assert rd.read() == [1, 0]
    assert rd2.read() == [1, 0]
    for client in (rd, rd2):
        client.send("PING")
        assert client.read() == "PONG"
        client.close()


def test_waitaof_out_of_range_and_bad_arguments(r):
    """wait.tcl's "WAIT out of range timeout (milliseconds)" for WAITAOF's timeout, and
    each argument's checks, in Redis's order (numlocal, numreplicas, timeout, then the
    AOF)."""
    assert "or out of range" in r.error("WAITAOF", 0, 0, "9223372036854775808")
    assert r.error("WAITAOF", 0, 0, "9223372036854775807") == "ERR timeout is out of range"
    assert r.error("WAITAOF", 0, 0, -1) == "ERR timeout is negative"
    assert r.error("WAITAOF", 0, 0, "1.5") == "ERR timeout is not an integer or out of range"
    assert r.error("WAITAOF", "x", 0, 0) == "ERR value is not an integer or out of range"
    assert r.error("WAITAOF", 2, 0, 0) == "ERR value is out of range, value must between 0 and 1"
    assert r.error("WAITAOF", -1, 0, 0) == "ERR value is out of range, value must between 0 and 1"
    assert r.error("WAITAOF", 0, "x", 0) == "ERR value is not an integer or out of range"
    assert r.error("WAITAOF", 0, -1, 0) == "ERR value is out of range, must be positive"
    assert r.error("WAITAOF", 0, 0) == "ERR wrong number of arguments for 'waitaof' command"
    assert r.error("WAITAOF", 0, 0, 0, 0) == "ERR wrong number of arguments for 'waitaof' command"
    r("CONFIG", "SET", "appendonly", "no")
    assert r.error("WAITAOF", 1, 0, -5) == "ERR timeout is negative"
    assert r.error("WAITAOF", 2, 0, 0) == "ERR value is out of range, value must between 0 and 1"
    assert r.error("WAITAOF", 1, 0, 0) == AOF_OFF


# -- beyond wait.tcl ----------------------------------------------------------------------

def test_replicas_asked_for_wait_the_whole_timeout(r):
    r("CONFIG", "SET", "appendfsync", "always")
    r("INCR", "foo")
    reply, took = timed(r, "WAITAOF", 1, 1, 200)
    assert reply == [1, 0] and 0.19 <= took < 2.0
    reply, took = timed(r, "WAITAOF", 0, 3, 150)
    assert reply == [1, 0] and 0.14 <= took < 2.0


def test_a_pipelined_write_and_waitaof(r):
    """The write and WAITAOF in one round: WAITAOF waits for that round's AOF write
    (and, under always, its fsync); the command after it waits its turn."""
    for policy, bound in (("always", 0.5), ("everysec", EVERYSEC_BOUND_S)):
        r("CONFIG", "SET", "appendfsync", policy)
        r.send("INCR", "foo")
        r.send("WAITAOF", 1, 0, 0)
        r.send("PING")
        started = time.monotonic()
        assert isinstance(r.read(), int)
        assert r.read() == [1, 0]
        assert time.monotonic() - started < bound
        assert r.read() == "PONG"


def test_in_multi_and_in_scripts_it_answers_at_once(r):
    """Where a client may not block it answers what holds now: in MULTI about the
    writes before the transaction (those in it are logged with its EXEC), in a script
    about the script's own client (no write of its own: Redis's Lua client)."""
    r("CONFIG", "SET", "appendfsync", "no")
    r("INCR", "foo")
    assert r("MULTI") == "OK"
    assert r("WAITAOF", 1, 1, 0) == "QUEUED"
    assert r("EXEC") == [[0, 0]]
    r("CONFIG", "SET", "appendfsync", "always")     # fsyncs: the INCR is on disk now
    assert r("MULTI") == "OK"
    r("INCR", "foo")
    r("WAITAOF", 1, 1, 0)
    assert r("EXEC") == [2, [1, 0]]
    reply, took = timed(r, "EVAL", "redis.call('incr', 'foo') "
                                   "return redis.call('waitaof', 1, 1, 0)", 0)
    assert reply == [1, 0] and took < 0.5
    r("CONFIG", "SET", "appendonly", "no")
    assert r("EVAL", "return redis.pcall('waitaof', 1, 0, 0)['err']", 0) == AOF_OFF


def test_client_unblock_answers_what_it_has(r):
    r("CONFIG", "SET", "appendfsync", "no")
    rd = r.deferred()
    rd.send("INCR", "foo")
    rd.read()
    rd.send("CLIENT", "ID")
    cid = rd.read()
    rd.send("WAITAOF", 1, 0, 0)
    r.wait_for_blocked_clients_count(1)
    assert " flags=b " in next(c for c in r("CLIENT", "LIST").splitlines()
                               if c.startswith(f"id={cid} "))
    assert r("CLIENT", "UNBLOCK", cid) == 1                 # TIMEOUT: the counts
    assert rd.read() == [0, 0]
    rd.send("WAITAOF", 1, 0, 0)
    r.wait_for_blocked_clients_count(1)
    assert r("CLIENT", "UNBLOCK", cid, "ERROR") == 1
    assert rd.read() == "!UNBLOCKED client unblocked via CLIENT UNBLOCK"
    rd.close()


def test_redis_py_waitaof_and_commandstats(sluice, r):
    r("CONFIG", "RESETSTAT")
    client = redis.Redis(port=sluice.port)
    try:
        client.incr("foo")
        assert client.waitaof(1, 0, 0) == [1, 0]
        assert client.waitaof(0, 0, 0) == [1, 0]
        with pytest.raises(redis.ResponseError, match="value must between 0 and 1"):
            client.waitaof(5, 0, 0)
    finally:
        client.close()
    assert r.cmdstat("waitaof").startswith("calls=3,")
    info = r("COMMAND", "INFO", "WAITAOF")[0]
    assert info[:7] == ["waitaof", 4, ["blocking"], 0, 0, 0,
                        ["@slow", "@blocking", "@connection"]]
