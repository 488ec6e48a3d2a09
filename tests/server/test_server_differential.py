"""The network server against redis-server, over RESP.

* tests/differential.py's runner with an "engine over a socket" executor: the
  hand-written sequences of tests/commands/test_differential.py (and a few random ones) are
  replayed on sluice-server and on the oracle, replies compared with the deliberate
  differences absorbed exactly as for the embedded engine;
* raw RESP byte streams (connection-level commands, transactions, pub/sub context,
  error paths, protocol errors): the bytes a client receives must be identical,
  except for the server version HELLO reports.
"""
from __future__ import annotations

import re
import socket
import time

import pytest

from command_generator import generate
from differential import RedisOracle, run_both
from test_differential import SEQUENCES

from raw_io import read_all
from servers import RedisServer, SluiceServer


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


@pytest.fixture
def over_socket(sluice):
    """A raw RESP2 connection to sluice-server (full error texts), flushed."""
    executor = RedisOracle("127.0.0.1", sluice.port)
    executor.execute("FLUSHALL")
    yield executor
    executor.close()


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_handwritten_sequence_over_resp(name, over_socket, oracle) -> None:
    run_both(over_socket, oracle, SEQUENCES[name], label=f"resp:{name}")


@pytest.mark.parametrize("seed", [0, 1])
def test_random_sequence_over_resp(seed, over_socket, oracle) -> None:
    run_both(over_socket, oracle, generate(seed, 300), label=f"resp:seed={seed}")


# -- raw bytes ------------------------------------------------------------------------

def resp(*args) -> bytes:
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def script(*lines: str) -> bytes:
    return b"".join(resp(*line.split()) for line in lines)


def exchange(port: int, data: bytes, settle: float = 0.25) -> bytes:
    """Sends data, then reads until the server closes or stays quiet for `settle`."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(data)
        out, closed = read_all(s, settle)
        return out + b"<closed>" if closed else out


def mask_hello(data: bytes) -> bytes:
    """HELLO's client id (the two servers have had different numbers of clients) and
    version (Sluice reports 7.2.16, the oracle is 7.0.15: DELIBERATE_DIFFERENCES)."""
    data = re.sub(rb"\$2\r\nid\r\n:\d+\r\n", b"<id>", data)
    return re.sub(rb"\$7\r\nversion\r\n\$\d+\r\n[0-9.]+\r\n", b"<version>", data)


RAW_CASES = {
    "transactions": script(
        "MULTI", "MULTI", "WATCH a", "FOO", "GET", "SET a 1", "EXEC", "EXEC", "DISCARD",
        "EXEC x", "MULTI", "EXEC x", "EXEC", "MULTI", "SET a 1", "INCR a", "GET a", "EXEC",
        "MULTI", "XADD s 1-0 f v", "XREAD BLOCK 0 STREAMS s $", "XREAD STREAMS s 0",
        "XREADGROUP GROUP g c STREAMS s >", "EXEC", "DISCARD"),
    "watch": script(
        "SET k 1", "WATCH k", "SET k 2", "MULTI", "GET k", "EXEC", "WATCH k", "MULTI",
        "UNWATCH", "EXEC", "WATCH", "UNWATCH x", "WATCH k", "FLUSHALL", "MULTI", "EXEC",
        # FLUSHALL from another database: only WATCHed keys that existed abort EXEC
        "SELECT 1", "SET w 1", "WATCH w nothere", "SELECT 0", "FLUSHALL", "SELECT 1",
        "MULTI", "PING", "EXEC", "WATCH nothere", "SELECT 0", "FLUSHALL", "SELECT 1", "MULTI",
        "PING", "EXEC", "SET w 1", "WATCH w", "SELECT 0", "FLUSHDB", "SELECT 1", "MULTI",
        "PING", "EXEC", "SELECT 0"),
    "pubsub_resp2": script(
        "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUBSCRIBE a", "SUBSCRIBE b", "PSUBSCRIBE p*",
        "PING", "PING x", "GET a", "CLIENT ID", "PUBLISH a m", "UNSUBSCRIBE x",
        "PUNSUBSCRIBE p*", "UNSUBSCRIBE b", "UNSUBSCRIBE a", "PING"),
    "pubsub_resp3": script(
        "HELLO 3", "SUBSCRIBE a", "GET x", "PING", "UNSUBSCRIBE a", "PUBLISH a m",
        "PSUBSCRIBE x*", "PUBSUB NUMPAT", "PUBSUB NUMSUB a x", "PUNSUBSCRIBE"),
    "client_no_evict": script(
        "CLIENT NO-EVICT on", "CLIENT NO-EVICT OFF", "CLIENT NO-EVICT maybe", "CLIENT NO-EVICT",
        "CLIENT NO-EVICT on off", "MULTI", "CLIENT NO-EVICT ON", "EXEC", "RESET"),
    "client_reply_errors": script(
        "CLIENT REPLY maybe", "CLIENT REPLY", "CLIENT REPLY on x", "client reply ON")
    + resp("EVAL", "return redis.call('client', 'reply', 'off')", 0)
    + resp("EVAL", "return redis.pcall('CLIENT', 'REPLY', 'skip')", 0) + script("PING"),
    "client_reply_skip_and_off": script(
        "CLIENT REPLY SKIP", "SET a 1", "GET a", "CLIENT REPLY OFF", "SET a 2", "GETX",
        "GET", "CLIENT REPLY SKIP", "GET a", "XADD s 1-0 f v", "CLIENT REPLY ON", "GET a",
        "XLEN s"),
    "client_reply_on_ends_skip": script(
        "CLIENT REPLY SKIP", "CLIENT REPLY ON", "GET a", "CLIENT REPLY SKIP",
        "CLIENT REPLY SKIP", "GET a", "PING"),
    "client_reply_reset": script(
        "CLIENT REPLY SKIP", "RESET", "PING", "CLIENT REPLY OFF", "RESET", "PING"),
    "client_reply_off_in_transaction": script(
        "CLIENT REPLY OFF", "MULTI", "BADCMD", "SET a 1", "EXEC", "MULTI", "SET a 2",
        "EXEC", "CLIENT REPLY ON", "GET a"),
    "client_reply_blocked": script(
        "CLIENT REPLY SKIP", "BLPOP l 0.05", "PING x", "CLIENT REPLY OFF",
        "XREAD BLOCK 50 STREAMS s $", "CLIENT REPLY ON", "PING y"),
    "pubsub_in_multi": script("MULTI", "SUBSCRIBE c", "PING", "EXEC", "UNSUBSCRIBE c"),
    "shutdown_in_multi": script("MULTI", "SET a 1", "SHUTDOWN NOSAVE", "EXEC", "GET a"),
    "blocking_timeouts": script(
        "XREAD BLOCK 30 STREAMS nokey $", "XADD s 1-0 f v", "XGROUP CREATE s g $",
        "XREADGROUP GROUP g c BLOCK 30 STREAMS s >", "XREAD BLOCK 30 STREAMS s 1-0",
        "XREAD BLOCK 30 COUNT 1 STREAMS s 0", "HELLO 3", "XREAD BLOCK 30 STREAMS nokey $",
        "XREADGROUP GROUP g c BLOCK 30 STREAMS s >", "ECHO done"),
    "client": script(
        "CLIENT KILL 1.2.3.4:5", "CLIENT KILL ID 999", "CLIENT KILL ID abc",
        "CLIENT KILL FOO bar", "CLIENT KILL ADDR 1.2.3.4:5 SKIPME maybe", "CLIENT KILL ID",
        "CLIENT LIST TYPE foo", "CLIENT LIST ID 99999 99998", "CLIENT LIST ID x",
        "CLIENT FOO", "CLIENT", "CLIENT SETNAME", "CLIENT SETNAME a", "CLIENT GETNAME",
        "CLIENT UNBLOCK 99999", "CLIENT UNBLOCK x", "CLIENT UNBLOCK 5 FOO",
        "CLIENT GETNAME x", "CLIENT LIST TYPE normal ID 1", "CLIENT LIST TYPE normal x",
        "CLIENT UNBLOCK 1 2 3", "CLIENT LIST ID", "CLIENT KILL MAXAGE x", "CLIENT SETNAME a\tb"),
    "connection": script(
        "AUTH x", "AUTH a b", "AUTH default x", "AUTH a b c", "HELLO 3 AUTH default x",
        "HELLO 2 AUTH foo bar", "HELLO 2 SETNAME a", "CLIENT GETNAME", "HELLO 2 FOO",
        "HELLO two", "HELLO 1", "HELLO 2 SETNAME", "RESET", "CLIENT GETNAME", "SELECT 99",
        "SELECT x", "SELECT 1", "SET k v", "RESET", "GET k", "DBSIZE", "TIME x", "ECHO",
        "ECHO hi", "PING a b", "PING", "QUIT extra"),
    "server": script(
        "PUBSUB", "PUBSUB FOO", "PUBSUB CHANNELS", "PUBSUB NUMSUB a b", "PUBSUB NUMPAT",
        "PUBSUB NUMPAT x", "PUBLISH a", "SUBSCRIBE", "CONFIG", "CONFIG FOO", "CONFIG GET",
        "CONFIG GET maxclients", "CONFIG SET", "CONFIG SET maxclients", "COMMAND FOO",
        "COMMAND COUNT x", "COMMAND GETKEYS", "COMMAND GETKEYS get a", "COMMAND GETKEYS get",
        "COMMAND GETKEYS foo bar", "COMMAND GETKEYS xread streams a b 0 0",
        "COMMAND GETKEYS del a b c", "COMMAND GETKEYS xgroup create s g $",
        "COMMAND INFO nosuch", "INFO nosuchsection", "PUBSUB CHANNELS a b", "PUBLISH a b c",
        "COMMAND LIST FILTERBY", "COMMAND LIST FILTERBY pattern", "COMMAND HELP x",
        "COMMAND GETKEYS ping", "COMMAND GETKEYS xadd s",
        # each key with its key spec's flags
        "COMMAND GETKEYSANDFLAGS lmove a b left right", "COMMAND GETKEYSANDFLAGS set k v",
        "COMMAND GETKEYSANDFLAGS zunionstore d 2 a b", "COMMAND GETKEYSANDFLAGS eval x 2 k1 k2",
        "COMMAND GETKEYSANDFLAGS xreadgroup group g c streams s1 s2 0 0",
        "COMMAND GETKEYSANDFLAGS lmpop 2 a b left", "COMMAND GETKEYSANDFLAGS smove a b m",
        "COMMAND GETKEYSANDFLAGS xgroup create s g $", "COMMAND GETKEYSANDFLAGS copy a b",
        "COMMAND GETKEYSANDFLAGS sort k store d", "COMMAND GETKEYSANDFLAGS sort k",
        "COMMAND GETKEYSANDFLAGS set k v get", "QUIT"),
    # client-supplied names in error texts: raw bytes (not UTF-8) echoed as they are,
    # cut at a NUL byte and at 128 bytes where Redis's C formats cut them
    "non_utf8_names": b"".join(resp(*args) for args in (
        (b"\xffcmd", b"a\xff"), (b"XGROUP", b"NOSUCH\xff"), (b"XINFO", b"x\xfe"),
        (b"XADD", b"k\xff", b"1-0", b"f", b"v"), (b"XPENDING", b"k\xff", b"g\xc3("),
        (b"XCLAIM", b"k\xff", b"g\xc3(", b"c", b"0", b"1-0"),
        (b"XAUTOCLAIM", b"k\xff", b"g\xc3(", b"c", b"0", b"0"),
        (b"XINFO", b"CONSUMERS", b"k\xff", b"g\xc3("), (b"XGROUP", b"SETID", b"k\xff", b"g\xc3(", b"$"),
        (b"XGROUP", b"CREATE", b"k\xff", b"g", b"$"), (b"XGROUP", b"CREATE", b"k\xff", b"g", b"$"),
        (b"XCLAIM", b"k\xff", b"g", b"c", b"0", b"1-0", b"OPT\xff"),
        (b"CLIENT", b"NOSUCH\xff"), (b"CLIENT", b"LIST", b"TYPE", b"x\xff"),
        (b"CLIENT", b"KILL", b"TYPE", b"x\xff"), (b"CLIENT", b"KILL", b"USER", b"x\xff"),
        (b"CONFIG", b"NOSUCH\xff"), (b"COMMAND", b"NOSUCH\xff"), (b"PUBSUB", b"x\xff"),
        (b"HELLO", b"3", b"x\xff"), (b"SET", b"e", b"1"), (b"EXPIRE", b"e", b"10", b"x\xff"),
        (b"MULTI",), (b"\xffnope",), (b"EXEC",))),
    "nul_and_long_names": b"".join(resp(*args) for args in (
        (b"a\x00b", b"x"), (b"FOO", b"a\x00b", b"c"), (b"XGROUP", b"a\x00b"),
        (b"XADD", b"s", b"1-0", b"f", b"v"), (b"XINFO", b"CONSUMERS", b"s", b"g\x00h"),
        (b"HELLO", b"3", b"a\x00b"), (b"CLIENT", b"LIST", b"TYPE", b"a\x00b"),
        (b"FOO", b"a" * 100, b"b" * 100, b"c"), (b"FOO", *[b"ab"] * 60), (b"F" * 200,),
        (b"FOO", "\u00e9".encode() * 100), (b"XGROUP", "\u00e9".encode() * 70),
        (b"XINFO", b"\xff" * 200))),
    "inline": b"PING\r\nECHO \"a b\"\r\nSET k 'v w'\r\nGET k\r\n\r\nPING x\n",
    "protocol_error_multibulk": script("PING") + b"*abc\r\n" + script("PING"),
    "protocol_error_bulk": b"*1\r\n$x\r\n",
    "protocol_error_expected_dollar": b"*2\r\n$4\r\nECHO\r\n:5\r\n",
    "protocol_error_4gb_bulk": b"*2\r\n$4\r\nECHO\r\n$4294967296\r\n",
    "protocol_error_quotes": b"SET k \"unbalanced\r\n",
}


@pytest.mark.parametrize("case", sorted(RAW_CASES))
def test_raw_bytes_match_redis(case, sluice, redis_server) -> None:
    flush = resp("FLUSHALL")
    data = RAW_CASES[case]
    ours = exchange(sluice.port, flush + data)
    theirs = exchange(redis_server[1], flush + data)
    assert mask_hello(ours) == mask_hello(theirs)


def test_client_no_evict_and_no_touch_flags(sluice) -> None:
    """CLIENT NO-EVICT ON and NO-TOUCH ON show as CLIENT INFO's `e` and `T` flags,
    until OFF or RESET; a NO-TOUCH client's GET (no fast path then) leaves the key's
    idle time."""
    flags = re.compile(rb"flags=(\w+)")
    out = exchange(sluice.port, script(
        "CLIENT NO-EVICT ON", "CLIENT INFO", "CLIENT NO-TOUCH ON", "CLIENT INFO",
        "CLIENT NO-EVICT OFF", "CLIENT INFO", "CLIENT NO-TOUCH OFF", "CLIENT INFO",
        "CLIENT NO-EVICT ON", "CLIENT NO-TOUCH ON", "RESET", "CLIENT INFO"))
    assert flags.findall(out) == [b"e", b"eT", b"T", b"N", b"N"]
    exchange(sluice.port, script("SET idle v"))
    time.sleep(1.1)
    out = exchange(sluice.port, script("CLIENT NO-TOUCH ON", "GET idle", "OBJECT IDLETIME idle",
                                       "CLIENT NO-TOUCH OFF", "GET idle", "OBJECT IDLETIME idle"))
    untouched, touched = (int(n) for n in re.findall(rb":(\d+)\r\n", out))
    assert untouched >= 1 and touched == 0


def test_client_reply_off_still_counts_errors_and_runs_commands(sluice) -> None:
    """Under CLIENT REPLY OFF the commands run (pipelined through the fast path's
    batch) and their errors count in errorstats, as in Redis; only the bytes go."""
    def errors() -> int:
        out = exchange(sluice.port, script("INFO errorstats"))
        found = re.search(rb"errorstat_ERR:count=(\d+)", out)
        return int(found.group(1)) if found else 0
    before = errors()
    quiet = script("CLIENT REPLY OFF", *["INCR n"] * 200, "GETX", "GET", "HSET n f v")
    assert exchange(sluice.port, resp("DEL", "n") + quiet) == b":0\r\n"
    assert errors() == before + 2
    assert exchange(sluice.port, script("GET n")) == b"$3\r\n200\r\n"
    assert exchange(sluice.port, script("CLIENT REPLY SKIP", "CLIENT REPLY SKIP", "INCR n",
                                        "CLIENT REPLY SKIP", "INCR n", "INCR n")) == b":203\r\n"


def test_garbage_bytes_close_the_connection(sluice, redis_server) -> None:
    garbage = bytes(range(256)) * 300            # no newline for > 64 KiB: too big inline
    ours = exchange(sluice.port, garbage, settle=1.0)
    theirs = exchange(redis_server[1], garbage, settle=1.0)
    assert ours == theirs
    assert ours.endswith(b"<closed>") and b"Protocol error" in ours
    # the server is fine afterwards
    assert exchange(sluice.port, resp("PING")) == b"+PONG\r\n"


def test_unauthenticated_limits_match_redis(tmp_path, redis_server) -> None:
    """With requirepass: NOAUTH rules, unauthenticated protocol limits, AUTH, HELLO AUTH."""
    with RedisServer(["--save", "", "--appendonly", "no", "--requirepass", "s3cret",
                      "--loglevel", "warning"], workdir=tmp_path) as oracle, \
            SluiceServer(["--requirepass", "s3cret"]) as srv:
        port = oracle.port
        cases = [
            script("FOO", "GET", "GET a", "PING", "AUTH x", "AUTH u x", "AUTH a b c",
                   "HELLO 3", "HELLO 4", "HELLO 3 AUTH default wrong", "MULTI", "GET a",
                   "EXEC", "CLIENT SETNAME x", "AUTH s3cret", "PING",
                   "CLIENT GETNAME", "RESET", "PING", "HELLO 3 AUTH default s3cret SETNAME nm",
                   "CLIENT GETNAME", "QUIT"),
            resp(*(["XADD", "s", "*"] + ["f", "v"] * 6)),       # > 10 args before AUTH
            b"*2\r\n$4\r\nECHO\r\n$20000\r\n",                  # > 16 KiB bulk before AUTH
            resp("AUTH", "s3cret") + resp("ECHO", "x" * 20000)[:30],
        ]
        for data in cases:
            ours = exchange(srv.port, data)
            theirs = exchange(port, data)
            assert mask_hello(ours) == mask_hello(theirs), data[:60]
        # Redis 7.0 sets the name of a refused HELLO ... SETNAME (fixed later):
        # Sluice sets it only once the client is authenticated.
        assert exchange(srv.port, script("HELLO 2 SETNAME n", "AUTH s3cret",
                                         "CLIENT GETNAME")).endswith(b"+OK\r\n$-1\r\n")


# -- which writes count as a change of the key for WATCH -------------------------------

_BASE = [("XADD", "s", "1-1", "f", "v")]
_GROUP = _BASE + [("XGROUP", "CREATE", "s", "g", "0")]
_READ = _GROUP + [("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")]
WATCH_CASES = [
    (_BASE, ("XADD", "s", "2-1", "f", "v")),
    (_BASE, ("XGROUP", "CREATE", "s", "g", "0")),
    ([], ("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")),
    (_GROUP, ("XGROUP", "SETID", "s", "g", "0")),
    (_GROUP, ("XGROUP", "DESTROY", "s", "g")),
    (_GROUP, ("XGROUP", "CREATECONSUMER", "s", "g", "c")),
    (_READ, ("XGROUP", "DELCONSUMER", "s", "g", "c")),
    (_BASE, ("XSETID", "s", "5-5")),
    (_GROUP, ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")),
    (_READ, ("XACK", "s", "g", "1-1")),
    (_READ, ("XCLAIM", "s", "g", "d", "0", "1-1")),
    (_READ, ("XAUTOCLAIM", "s", "g", "d", "0", "0")),
    (_BASE, ("XDEL", "s", "1-1")),
    (_BASE, ("XTRIM", "s", "MAXLEN", "0")),
]


def _watch_aborted(port: int, setup: list, cmd: tuple) -> bool:
    """WATCH s; another client runs cmd; MULTI/EXEC: True if EXEC was aborted."""
    import redis
    a, b = redis.Redis(port=port), redis.Redis(port=port)
    try:
        a.flushall()
        for c in setup:
            a.execute_command(*c)
        pipe = a.pipeline(transaction=True)
        pipe.watch("s")
        b.execute_command(*cmd)
        pipe.multi()
        pipe.ping()
        try:
            pipe.execute()
        except redis.WatchError:
            return True
        return False
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("setup,cmd", WATCH_CASES, ids=[" ".join(c[1][:2]) + str(i)
                                                       for i, c in enumerate(WATCH_CASES)])
def test_watch_sees_the_changes_redis_sees(setup, cmd, sluice, redis_server) -> None:
    """Entries count as changes; consumer-group state does not, except a stream
    made by MKSTREAM (Redis keeps groups out of what WATCH sees)."""
    assert _watch_aborted(sluice.port, setup, cmd) == _watch_aborted(redis_server[1], setup,
                                                                     cmd)
