"""EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT: the bytes sluice-server answers compared
with redis-server 7.0's (RESP2 and RESP3), the effects a script leaves in the AOF, and
redis-py's Lock and register_script over RESP and embedded."""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest
import redis
from redis.exceptions import WatchError

from engine import Engine, EmbeddedRedis
from persist.manifest import Manifest
from persist.resp_log import CommandReader
from preloaded import kill_and_wait
from raw_io import raw_socket
from servers import SluiceServer

END = b"$7\r\n__end__\r\n"


def encode(argv: tuple) -> bytes:
    out = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def exchange(sock, commands: list) -> bytes:
    """The bytes answering `commands` (sent pipelined), up to an ECHO sent after them."""
    sock.sendall(b"".join(encode(c) for c in commands) + encode(("ECHO", "__end__")))
    data = b""
    while not data.endswith(END):
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        data += chunk
    return data[:-len(END)]


def replies(port: int, protocol: int, commands: list) -> bytes:
    """The replies of a fresh, flushed server to commands in that protocol."""
    with raw_socket(port) as sock:
        exchange(sock, [("FLUSHALL",), ("SCRIPT", "FLUSH"), ("HELLO", protocol)])
        return exchange(sock, commands)


@pytest.fixture(scope="module")
def sluice() -> Iterator[SluiceServer]:
    with SluiceServer(["--save", ""]) as server:
        yield server


STREAM_SCRIPT = ("redis.call('xadd', KEYS[1], '1-1', 'f', 'v'); "
                 "redis.call('xadd', KEYS[1], '2-1', 'g', 'w'); "
                 "redis.call('xgroup', 'create', KEYS[1], 'grp', '0'); "
                 "local read = redis.call('xreadgroup', 'group', 'grp', 'c', 'count', '1', "
                 "'streams', KEYS[1], '>'); "
                 "return {read, redis.call('xack', KEYS[1], 'grp', '1-1'), "
                 "redis.call('xpending', KEYS[1], 'grp')}")

SCENARIOS = {
    "conversions": [
        ("EVAL", "return 1", 0), ("EVAL", "return {1, 2, {3, 'x'}, nil, 4}", 0),
        ("EVAL", "return redis.status_reply('FINE')", 0),
        ("EVAL", "return redis.error_reply('My Error')", 0),
        ("EVAL", "return {err='CODE text'}", 0), ("EVAL", "return 3.99", 0),
        ("EVAL", "return true", 0), ("EVAL", "return false", 0), ("EVAL", "return nil", 0),
        ("EVAL", "return {double=3.5}", 0), ("EVAL", "return {map={a=1}}", 0),
        ("EVAL", "return {set={a=true}}", 0), ("EVAL", "return {big_number='123'}", 0),
        ("EVAL", "return {1, {set={x=true}}, {big_number='-99999999999999999999'}}", 0),
        ("EVAL", "return {KEYS[1], ARGV[1], ARGV[2], #KEYS, #ARGV}", 1, "k", "a", "b"),
        ("EVAL", "redis.setresp(3); return redis.call('get', 'missing')", 0),
        ("EVAL", "return redis.call('get', 'missing')", 0),
        ("EVAL", "redis.setresp(3); return {true, false, redis.call('get', 'missing')}", 0),
        ("EVAL", "return redis.error_reply('My Error')", 0),
        ("EVAL", "return redis.error_reply('-CODE x')", 0),
    ],
    "numkeys and cache": [
        ("EVAL", "return 1", "x"), ("EVAL", "return 1", -1), ("EVAL", "return 1", 2, "a"),
        ("EVAL", "return 1"), ("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0),
        ("SCRIPT", "LOAD", "return 1"), ("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0),
        ("EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", 0),
        ("EVALSHA", "e0e1", 0), ("EVAL", "return 2", 0),
        ("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
         "7f923f79fe76194c868d7e1d0820de36700eb649", "nope"),
        ("SCRIPT", "FLUSH", "BAD"), ("SCRIPT", "FLUSH", "SYNC"),
        ("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"),
        ("SCRIPT", "FLUSH"), ("SCRIPT", "FLUSH", "ASYNC"), ("SCRIPT", "HELP"),
        ("SCRIPT", "KILL"), ("SCRIPT", "LOAD", "return +"), ("SCRIPT", "NOPE"),
        ("EVAL", "return +", 0), ("EVAL", "x = 1", 0),
        ("COMMAND", "GETKEYS", "EVAL", "return 1", 2, "a", "b", "c"),
        ("COMMAND", "GETKEYS", "EVALSHA_RO", "abc", 0, "c"),
        ("COMMAND", "GETKEYS", "EVAL", "return 1", 5, "c"),
    ],
    "select inside a script": [
        ("EVAL", "redis.call('select', 2); redis.call('set', KEYS[1], 'v'); "
                 "return redis.call('get', KEYS[1])", 1, "k"),
        ("GET", "k"), ("SELECT", 2), ("GET", "k"),
        ("EVAL", "return redis.call('get', KEYS[1])", 1, "k"),
    ],
    "streams": [
        ("EVAL", STREAM_SCRIPT, 1, "s"), ("XRANGE", "s", "-", "+"),
        ("EVAL", "return redis.call('xread', 'block', '100', 'streams', KEYS[1], '$')", 1, "s"),
        ("EVAL", "return redis.call('xreadgroup', 'group', 'grp', 'c', 'block', '0', "
                 "'streams', KEYS[1], '>')", 1, "s"),
        ("EVAL", "return redis.call('xreadgroup', 'group', 'grp', 'c', 'streams', KEYS[1], '>')",
         1, "s"),
        ("EVAL", "return redis.call('xinfo', 'groups', KEYS[1])", 1, "s"),
    ],
    "errors": [
        ("SET", "str", "abc"),
        ("EVAL", "return redis.pcall('incr', KEYS[1])", 1, "str"),
        ("EVAL", "local r = redis.pcall('incr', KEYS[1]); return {type(r), r['err']}", 1, "str"),
        ("EVAL", "return redis.call('incr', KEYS[1])", 1, "str"),
        ("EVAL", "redis.call('set', 'a', '1'); redis.call('incr', 'str'); "
                 "redis.call('set', 'b', '2')", 0),
        ("MGET", "a", "b"),
        ("EVAL", "return redis.call('multi')", 0), ("EVAL", "return redis.call('watch', 'a')", 0),
        ("EVAL", "return redis.call('subscribe', 'ch')", 0),
        ("EVAL", "return redis.call('eval', 'return 1', '0')", 0),
        ("EVAL", "return redis.call('script', 'load', 'return 1')", 0),
        ("EVAL", "return redis.call('nosuch')", 0), ("EVAL", "return redis.call('get')", 0),
        ("EVAL", "return redis.pcall('xgroup', 'nosuch')", 0),
        ("EVAL", "return redis.call()", 0),
    ],
    "argument counts from scripts": [   # the table's arity vs a command's own count
        ("EVAL", "return redis.pcall('hset', 'h', 'f')", 0),
        ("EVAL", "return redis.pcall('hset', 'h', 'f', 'v', 'g')", 0),
        ("EVAL", "return redis.pcall('hmset', 'h', 'f', 'v', 'g')", 0),
        ("EVAL", "return redis.pcall('mset', 'a', '1', 'b')", 0),
        ("EVAL", "return redis.pcall('msetnx', 'a', '1', 'b')", 0),
        ("EVAL", "return redis.pcall('mset', 'a')", 0),
        ("EVAL", "return redis.pcall('lpop', 'l', '1', '2')", 0),
        ("EVAL", "return redis.pcall('ping', 'a', 'b')", 0),
        ("EVAL", "return redis.pcall('xinfo')", 0),
        ("EVAL", "return redis.pcall('get', 'a', 'b')", 0),
        ("EVAL", "redis.call('hset', 'h', 'f', 'v', 'g')", 0),
    ],
    "read-only scripts": [
        ("SET", "k", "v"),
        ("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "k"),
        ("EVAL_RO", "return redis.call('set', KEYS[1], 'x')", 1, "k"),
        ("EVAL_RO", "return redis.pcall('xadd', KEYS[1], '*', 'f', 'v')", 1, "s"),
        ("EVAL_RO", "return redis.call('xgroup', 'create', KEYS[1], 'g', '$', 'MKSTREAM')", 1, "s"),
        ("SCRIPT", "LOAD", "return redis.call('del', KEYS[1])"),
        ("EVALSHA_RO", "98b2b88b1aa43ae891c8e2859ad7d9cd48c1c784", 1, "k"),
        ("EVAL_RO", "return redis.call('exists', KEYS[1])", 1, "k"),
        ("GET", "k"),
    ],
    "shebang": [
        ("EVAL", "#!lua\nreturn redis.call('set', KEYS[1], '1')", 1, "a"),
        ("EVAL", "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], '1')", 1, "a"),
        ("EVAL", "#!lua flags=no-writes,allow-oom\nreturn error('x')", 0),
        ("EVAL", "#!lua flags=allow-cross-slot-keys,no-cluster,allow-stale\r\nreturn 1", 0),
        ("EVAL", "#!lua  flags=\nreturn 2", 0), ("EVAL", "#!lua", 0),
        ("EVAL", "#!py\nreturn 1", 0), ("EVAL", "#! lua\nreturn 1", 0),
        ("EVAL", "#!lua flags=bogus\nreturn 1", 0), ("EVAL", "#!lua bogus=1\nreturn 1", 0),
        ("EVAL", "#!lua flags=no-writes,,allow-oom\nreturn 1", 0),
        ("EVAL_RO", "#!lua\nreturn 1", 0), ("EVAL_RO", "#!lua flags=no-writes\nreturn 1", 0),
        ("EVAL_RO", "#!lua\nreturn 1", 5), ("EVAL", "return 1", " 1"), ("EVAL", "return 1", "+0"),
    ],
    "scripts in a transaction": [
        ("MULTI",), ("EVAL", "return redis.call('incr', KEYS[1])", 1, "n"),
        ("EVAL", "return redis.call('incr', KEYS[1])", 1, "n"), ("EXEC",),
    ],
}


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_replies_match_redis(scenario, protocol, sluice, redis_server):
    commands = SCENARIOS[scenario]
    ours = replies(sluice.port, protocol, commands)
    theirs = replies(redis_server[1], protocol, commands)
    assert ours == theirs
    assert b"-ERR unknown command" not in ours


# -- effects in the AOF -----------------------------------------------------------------

def aof_commands(path) -> list:
    """Every command of the engine's AOF increments, in order (SELECTs left out: these
    tests stay in database 0)."""
    aof = os.path.join(path, "appendonlydir")
    with open(os.path.join(aof, "appendonly.aof.manifest"), "rb") as fh:
        manifest = Manifest.parse(fh.read())
    out = []
    for incr in manifest.incrs:
        with open(os.path.join(aof, incr.name), "rb") as fh:
            out.extend(c for c in CommandReader(fh.read(), incr.name) if c[0] != b"SELECT")
    return out


def test_a_script_reaches_the_aof_as_its_effects_in_multi_exec(tmp_path):
    with Engine(dir=str(tmp_path), appendonly=True, appendfsync="always", save="") as engine:
        r = EmbeddedRedis(engine)
        before = aof_commands(tmp_path)
        assert r.eval("redis.call('set', KEYS[1], ARGV[1]); "
                      "redis.call('xadd', KEYS[2], '5-1', 'f', 'v'); "
                      "return redis.call('incr', 'n')", 2, "k", "s", "val") == 1
        written = aof_commands(tmp_path)[len(before):]
        assert written[0] == [b"MULTI"] and written[-1] == [b"EXEC"]
        body = written[1:-1]
        assert [b"SET", b"k", b"val"] in body and [b"XADD", b"s", b"5-1", b"f", b"v"] in body
        assert not any(c[0].upper() in (b"EVAL", b"EVALSHA") for c in written)

        # reads only: nothing logged
        count = len(aof_commands(tmp_path))
        assert r.eval("return redis.call('get', KEYS[1])", 1, "k") == b"val"
        assert len(aof_commands(tmp_path)) == count

        # an error half-way keeps (and logs) what was written before it
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            r.eval("redis.call('set', 'a', '1'); redis.call('incr', KEYS[1]); "
                   "redis.call('set', 'b', '2')", 1, "s")
        tail = aof_commands(tmp_path)[count:]
        assert tail[0] == [b"MULTI"] and tail[-1] == [b"EXEC"]
        assert [b"SET", b"a", b"1"] in tail and not any(b"b" in c[1:2] for c in tail)
        assert r.get("a") == b"1" and r.get("b") is None
        expected = {key: r.type(key) for key in (b"k", b"s", b"n", b"a")}
        entries = r.xrange("s")
    with Engine(dir=str(tmp_path), appendonly=True, save="") as again:
        r = EmbeddedRedis(again)
        assert {key: r.type(key) for key in expected} == expected
        assert r.get("k") == b"val" and r.get("n") == b"1" and r.get("a") == b"1"
        assert r.xrange("s") == entries


def test_kill_9_right_after_a_script_keeps_all_its_writes():
    with SluiceServer(["--save", "", "--appendonly", "yes", "--appendfsync", "always"]) as server:
        r = redis.Redis(port=server.port)
        script = ("for i = 1, 50 do redis.call('set', 'k' .. i, i); "
                  "redis.call('xadd', KEYS[1], i .. '-1', 'i', i) end; return 50")
        assert r.eval(script, 1, "s") == 50
        r.close()
        kill_and_wait([server.proc.pid])
        server.start()
        r = redis.Redis(port=server.port)
        assert r.mget([f"k{i}" for i in range(1, 51)]) == [str(i).encode() for i in range(1, 51)]
        assert r.xlen("s") == 50
        r.close()


# -- transactions and blocked readers ---------------------------------------------------

def test_a_script_aborts_other_clients_watch_and_wakes_blocked_readers():
    engine = Engine()
    one, other = EmbeddedRedis(engine), EmbeddedRedis(engine)
    with one.pipeline() as pipe:
        pipe.watch("k")
        other.eval("redis.call('set', KEYS[1], 'x')", 1, "k")
        pipe.multi()
        pipe.set("k", "y")
        with pytest.raises(WatchError):
            pipe.execute()
    assert_reader_gets_the_script_entry(one, other, "s")


def assert_reader_gets_the_script_entry(reader: redis.Redis, writer: redis.Redis,
                                        key: str) -> None:
    """A reader blocked on `key` gets the entry a script of `writer` adds (reading from 0-0,
    so a reader that had not blocked yet finds it too)."""
    got = []
    thread = threading.Thread(target=lambda: got.append(reader.xread({key: "0-0"}, block=10000)))
    thread.start()
    time.sleep(0.2)         # most often the reader is blocked by now
    writer.eval("redis.call('xadd', KEYS[1], '7-1', 'f', 'v')", 1, key)
    thread.join(10)
    assert got == [[[key.encode(), [(b"7-1", {b"f": b"v"})]]]]


def test_command_info_of_eval_matches_redis(sluice, redis_server):
    """Arity, flags (movablekeys), key positions and the keynum key spec of EVAL & co."""
    assert_command_info_matches(sluice.port, redis_server[1],
                                ["eval", "evalsha", "eval_ro", "evalsha_ro", "script|load"])


def assert_command_info_matches(port: int, redis_port: int, names: list) -> None:
    """COMMAND INFO of each name: the same arity, flags, key positions and key specs
    (their notes too) on both servers."""
    ours, theirs = (redis.Redis(port=p, protocol=3) for p in (port, redis_port))
    for r in (ours, theirs):
        r.response_callbacks.clear()
    try:
        for name in names:
            mine = ours.execute_command("COMMAND", "INFO", name)[0]
            real = theirs.execute_command("COMMAND", "INFO", name)[0]
            assert mine[:2] + mine[3:6] == real[:2] + real[3:6], name
            assert sorted(mine[2]) == sorted(real[2]), name            # (a set in RESP3)
            assert mine[8] == real[8], name
    finally:
        ours.close()
        theirs.close()


def test_a_blocked_reader_of_the_server_wakes_after_a_script(sluice):
    reader, writer = redis.Redis(port=sluice.port), redis.Redis(port=sluice.port)
    writer.delete("wake")
    assert_reader_gets_the_script_entry(reader, writer, "wake")
    reader.close()
    writer.close()


def test_commandstats_of_a_script_whose_calls_fail_match_redis(sluice, redis_server):
    counts = []
    for port in (sluice.port, redis_server[1]):
        r = redis.Redis(port=port)
        r.config_resetstat()
        assert r.eval("redis.pcall('nosuch'); redis.pcall('get'); return 1", 0) == 1
        stats = r.info("commandstats")["cmdstat_eval"]
        counts.append((stats["calls"], stats["rejected_calls"], stats["failed_calls"]))
        r.close()
    assert counts[0] == counts[1] == (1, 0, 0)


# -- redis-py's Lock and register_script, over RESP and embedded --------------------------

@pytest.fixture(params=["server", "embedded"])
def client(request, sluice) -> Iterator[redis.Redis]:
    if request.param == "server":
        r = redis.Redis(port=sluice.port)
        r.flushall()
        r.script_flush()
    else:
        r = EmbeddedRedis(Engine())
    yield r
    r.close()


def test_redis_py_lock(client):
    lock = client.lock("resource", timeout=5, blocking_timeout=0.2)
    assert lock.acquire()
    assert not client.lock("resource", timeout=5, blocking_timeout=0.1).acquire()
    assert lock.extend(10) and 5000 < client.pttl("resource") <= 15000
    assert lock.reacquire() and client.pttl("resource") <= 5000
    lock.release()
    assert client.get("resource") is None
    assert lock.acquire()
    client.set("resource", "someone else")          # the release script finds another token
    with pytest.raises(redis.exceptions.LockNotOwnedError):
        lock.release()
    client.delete("resource")
    assert client.lock("resource", timeout=5, blocking_timeout=0.1).acquire()


def test_register_script_falls_back_from_noscript(client):
    incr = client.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
    assert incr(keys=["n"], args=[2]) == 2
    client.script_flush()
    assert incr(keys=["n"], args=[3]) == 5          # EVALSHA: NOSCRIPT, then EVAL
    assert client.script_exists(incr.sha) == [True]
