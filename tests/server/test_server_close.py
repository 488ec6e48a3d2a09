"""Replies on close: every way the server ends a connection - QUIT, CLIENT KILL of
oneself, protocol errors, the query-buffer and output-buffer limits, a client that
half-closes after pipelining, SHUTDOWN - sends the replies already due first, exactly
the bytes redis-server 7.0 sends under the same settings, and then closes. Run with
the AOF off and on with each appendfsync policy (replies then wait for the AOF
write), over RESP2 and RESP3; with appendfsync always, what was acknowledged before
a close is found again after kill -9 and a restart on the same directory.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from typing import Optional

import hiredis
import pytest
import redis

from raw_io import raw_socket, read_all
from test_persistence_errors import servers

pytestmark = pytest.mark.usefixtures("redis_server_binary")   # conftest: CI fails without

MODES = {
    "aof off": ["--appendonly", "no"],
    "always": ["--appendonly", "yes", "--appendfsync", "always"],
    "everysec": ["--appendonly", "yes", "--appendfsync", "everysec"],
    "no": ["--appendonly", "yes", "--appendfsync", "no"],
}
# The limits the cases run into (the query-buffer limit's smallest value is 1mb).
LIMITS = ["--client-query-buffer-limit", "1mb",
          "--client-output-buffer-limit", "normal", "256kb", "0", "0"]
QUIET = 5.0                   # seconds without data or close: the server kept it open
BIG = 600_000                 # one value whose reply is over the 256kb output limit
UVLOOP_READ = 256_000         # the most uvloop reads from a socket in one call


def cmd(*args) -> bytes:
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def xadds(first: int, count: int, size: int = 1) -> bytes:
    return b"".join(cmd("XADD", "s", f"{i}-1", "f", "v" * size)
                    for i in range(first, first + count))


def xadds_of_exactly(nbytes: int) -> bytes:
    """XADDs to s (IDs 1-1, 2-1, ...) totalling exactly nbytes: the last one pads."""
    out, i = b"", 1
    while nbytes - len(out) > 200:
        out += cmd("XADD", "s", f"{i}-1", "f", "v")
        i += 1
    for size in range(1, 200):
        last = cmd("XADD", "s", f"{i}-1", "f", "v" * size)
        if len(out) + len(last) == nbytes:
            return out + last
    raise AssertionError(f"no padding reaches {nbytes} bytes")


CASES = {
    "quit": b"QUIT\r\n",
    "writes then quit": xadds(1, 2) + cmd("XREAD", "STREAMS", "s", "0") + b"QUIT\r\n"
                        + xadds(3, 1),
    "ping then oversized bulk": b"PING\r\n*1\r\n$9999999999\r\n",
    "unbalanced quotes": xadds(1, 1) + b'PING "a\r\nPING\r\n',
    "invalid multibulk length": xadds(1, 1) + b"*3000000000\r\n" + xadds(2, 1),
    "query buffer limit": xadds(1, 1) + b"*2\r\n$4\r\nECHO\r\n$2000000\r\n" + b"x" * 1_100_000,
    "output buffer limit": xadds(1, 1) + cmd("XRANGE", "big", "-", "+") + xadds(2, 1),
    "client kill self": xadds(1, 1) + b"CLIENT KILL SKIPME no ADDR {addr}\r\nPING\r\n",
}
HALF_CLOSED = {
    "write then half-close": xadds(1, 1) + cmd("XLEN", "s"),
    "pipeline then half-close": xadds(1, 5000, 250) + cmd("XLEN", "s"),   # 1.3 MB
}


@pytest.fixture(scope="module", params=list(MODES))
def pair(request):
    """Sluice and redis-server started with the same persistence settings."""
    both = servers(MODES[request.param] + LIMITS)
    try:
        for _, srv in both:
            srv.start()
        yield dict(both)
    finally:
        for _, srv in both:
            srv.close()


def read_replies(s: socket.socket, count: int) -> None:
    reader = hiredis.Reader()
    for _ in range(count):
        while reader.gets() is False:
            reader.feed(s.recv(65536))


def connect(port: int, protocol: int) -> socket.socket:
    """A raw connection, switched to RESP3 by HELLO 3 (its reply read) if asked."""
    s = raw_socket(port, 30.0)
    if protocol == 3:
        s.sendall(b"HELLO 3\r\n")
        read_replies(s, 1)
    return s


def send(s: socket.socket, data: bytes, half_close: bool = False) -> bytes:
    """Sends data (the server may close while it is being sent), half-closes if asked;
    what the server sends until it closes, or <open> after it stayed quiet."""
    try:
        s.sendall(data)
        if half_close:
            s.shutdown(socket.SHUT_WR)
    except (BrokenPipeError, ConnectionResetError):
        pass
    out, closed = read_all(s, QUIET)
    s.close()
    return out if closed else out + b"<open>"


def run_case(port: int, protocol: int, data: bytes, half_close: bool = False) -> tuple:
    """(what the client received, XLEN s afterwards) on a flushed server."""
    admin = redis.Redis(port=port)
    admin.flushall()
    admin.xadd("big", {"f": "x" * BIG}, id="1-1")
    s = connect(port, protocol)
    addr = "%s:%d" % s.getsockname()
    received = send(s, data.replace(b"{addr}", addr.encode()), half_close)
    xlen = admin.xlen("s")
    admin.close()
    return received, xlen


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("case", list(CASES) + list(HALF_CLOSED))
def test_replies_before_the_close_match_redis(pair, case, protocol):
    half_close = case in HALF_CLOSED
    data = HALF_CLOSED[case] if half_close else CASES[case]
    theirs = run_case(pair["redis"].port, protocol, data, half_close)
    ours = run_case(pair["sluice"].port, protocol, data, half_close)
    assert not theirs[0].endswith(b"<open>"), theirs      # every case closes
    assert ours == theirs


@pytest.mark.parametrize("protocol", [2, 3])
def test_half_close_reaching_a_stalled_server_matches_redis(pair, protocol):
    """A pipeline and the client's half-close reach the server while it is stopped
    (SIGSTOP), so it reads them at once: with uvloop, one full read of UVLOOP_READ
    bytes and the end of input in the same callback, before the replies (waiting for
    the AOF write) went out. The warm-up makes the kernel's receive buffer grow big
    enough to hold the whole pipeline meanwhile."""
    pipeline = xadds_of_exactly(UVLOOP_READ)
    results = {}
    for name in ("redis", "sluice"):
        srv = pair[name]
        admin = redis.Redis(port=srv.port)
        admin.flushall()
        admin.close()
        s = connect(srv.port, protocol)
        for _ in range(10):
            s.sendall(cmd("XADD", "w", "*", "f", "x" * 500_000))
        read_replies(s, 10)
        sender = threading.Thread(target=send_and_half_close, args=(s, pipeline))
        os.kill(srv.proc.pid, signal.SIGSTOP)
        try:
            sender.start()
            time.sleep(0.3)
        finally:
            os.kill(srv.proc.pid, signal.SIGCONT)
        sender.join(30)
        assert not sender.is_alive()
        out, closed = read_all(s, QUIET)
        s.close()
        results[name] = (out.count(b"-1\r\n"), closed, out)      # (replies, closed, bytes)
    assert results["sluice"] == results["redis"]
    assert results["redis"][:2] == (pipeline.count(b"XADD"), True)


def send_and_half_close(s: socket.socket, data: bytes) -> None:
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)


def test_idle_timeout_closes_after_the_replies_as_redis_does(pair):
    """timeout 1: clients (RESP2, RESP3) idle after their last reply are closed with
    nothing more sent."""
    results = {}
    for name, srv in pair.items():
        admin = redis.Redis(port=srv.port)
        admin.flushall()
        admin.config_set("timeout", 1)
        admin.close()
        try:
            conns = [connect(srv.port, protocol) for protocol in (2, 3)]
            for number, s in enumerate(conns, 1):
                s.sendall(cmd("XADD", f"s{number}", f"{number}-1", "f", "v"))
            results[name] = [read_all(s, QUIET) for s in conns]
            for s in conns:
                s.close()
        finally:
            redis.Redis(port=srv.port).config_set("timeout", 0)
    assert results["sluice"] == results["redis"]
    assert results["redis"] == [(b"$3\r\n1-1\r\n", True), (b"$3\r\n2-1\r\n", True)]


def cli(port: int, *args) -> subprocess.CompletedProcess:
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True,
                          text=True, timeout=30)


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli is not installed")
@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_cli_quit_prints_ok(pair, protocol):
    flags = ["-3"] if protocol == 3 else []
    theirs = cli(pair["redis"].port, *flags, "quit")
    ours = cli(pair["sluice"].port, *flags, "quit")
    assert (theirs.returncode, theirs.stdout) == (0, "OK\n")
    assert (ours.returncode, ours.stdout, ours.stderr) == (0, "OK\n", "")


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("mode", list(MODES))
def test_shutdown_drops_the_replies_of_its_round_as_redis_does(mode, protocol):
    """SHUTDOWN pipelined after a write: redis-server 7.0 exits inside the command, so
    the client gets nothing of that read, not even the write's reply, and the write
    is kept (in the AOF, or the snapshot SHUTDOWN saves)."""
    results = {}
    for name, srv in servers(MODES[mode]):
        try:
            srv.start()
            received = send(connect(srv.port, protocol), xadds(1, 1) + b"SHUTDOWN\r\nPING\r\n")
            assert srv.proc.wait(30) == 0
            srv.start()
            check = redis.Redis(port=srv.port)
            results[name] = (received, check.xlen("s"))
            check.close()
        finally:
            srv.close()
    assert results["sluice"] == results["redis"] == (b"", 1)


def acknowledged_then_closed(port: int, number: int, protocol: int, closing: Optional[bytes]):
    """An XADD whose reply arrives just before the connection closes: by QUIT, by a
    protocol error, or (closing None) by the client's half-close."""
    s = connect(port, protocol)
    received = send(s, xadds(number, 1) + (closing or b""), half_close=closing is None)
    assert received.startswith(b"$%d\r\n%d-1\r\n" % (len(str(number)) + 2, number)), received
    return received


@pytest.mark.parametrize("protocol", [2, 3])
def test_acknowledged_before_close_survives_kill_9_with_always(protocol):
    """appendfsync always: the replies went out after the fsync, so every entry the
    client saw acknowledged is there after kill -9 and a restart on the directory."""
    closings = [b"QUIT\r\n", b"*1\r\n$-5\r\n", None]
    results = {}
    for name, srv in servers(MODES["always"]):
        try:
            srv.start()
            received = [acknowledged_then_closed(srv.port, n, protocol, closing)
                        for n, closing in enumerate(closings, 1)]
            srv.stop(signal.SIGKILL)
            srv.start()
            check = redis.Redis(port=srv.port)
            results[name] = (received, [e[0] for e in check.xrange("s")])
            check.close()
        finally:
            srv.close()
    assert results["sluice"] == results["redis"]
    assert results["sluice"][1] == [b"1-1", b"2-1", b"3-1"]
