"""SLOWLOG, LATENCY and MONITOR (engine/server/call_watch.py, fed by the road's hook
after a call) beside redis-server 7.0: the same commands on both servers, the entries,
lines and errors compared with what legitimately differs (times, durations, ports)
masked."""
from __future__ import annotations

import re
import socket
import time

import pytest
import redis

from servers import RedisServer, SluiceServer

LOOP = "local n = 0 for i = 1, %d do n = n + i end return n"


@pytest.fixture(scope="module")
def both():
    with SluiceServer() as sluice, RedisServer() as oracle:
        yield {"sluice": sluice.port, "redis": oracle.port}


def connect(port: int) -> redis.Redis:
    """A RESP2 client that sends nothing of its own on connect (no CLIENT SETINFO)."""
    return redis.Redis(port=port, driver_info=None)


def raw(conn: redis.Redis, *args):
    """A command's raw reply (errors as their text)."""
    try:
        return conn.execute_command(*args)
    except (redis.ResponseError, redis.AuthenticationError) as err:
        return f"error: {err}"


def on_both(both, steps):
    """Runs `steps(conn)` on each server; their results, by server."""
    out = {}
    for name, port in both.items():
        conn = connect(port)
        try:
            out[name] = steps(conn)
        finally:
            conn.close()
    return out


def test_slow_log_entries_match_redis(both) -> None:
    def steps(conn):
        conn.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
        conn.execute_command("SLOWLOG", "RESET")
        conn.execute_command("SET", "a", "1")
        pipe = conn.pipeline(transaction=True)
        pipe.set("a", "2")
        pipe.incr("a")
        pipe.execute()
        conn.execute_command("EVAL", "redis.call('set', 'x', 'y') return 1", "0")
        raw(conn, "AUTH", "nobody", "secret")
        conn.execute_command("SET", "k" * 200, "v")
        conn.execute_command("RPUSH", "list", *range(40))
        conn.execute_command("CLIENT", "SETNAME", "watcher")
        raw(conn, "GET")                                   # refused: not logged
        entries = conn.execute_command("SLOWLOG", "GET", "-1")
        length = conn.execute_command("SLOWLOG", "LEN")
        errors = [raw(conn, "SLOWLOG", *args) for args in (
            ("GET", "-2"), ("GET", "x"), ("GET", "1", "2"), ("LEN", "x"), ("RESET", "x"),
            ("NOPE",))]
        few = len(conn.execute_command("SLOWLOG", "GET", "2"))
        conn.execute_command("CONFIG", "SET", "slowlog-max-len", "3")
        trimmed = conn.execute_command("SLOWLOG", "LEN")
        conn.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "-1")
        conn.execute_command("SLOWLOG", "RESET")
        conn.execute_command("SET", "a", "3")
        off = conn.execute_command("SLOWLOG", "LEN")
        conn.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        conn.execute_command("CONFIG", "SET", "slowlog-max-len", "128")
        shown = [(args, b"?:0" if peer == b"?:0" else b"ip:port", name)
                 for _, when, us, args, peer, name in entries]
        assert all(abs(when - time.time()) < 60 and us >= 0 for _, when, us, *_ in entries)
        ids = [entry[0] for entry in entries]
        assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
        return shown, length, errors, few, trimmed, off
    got = on_both(both, steps)
    assert got["sluice"] == got["redis"]
    shown = got["sluice"][0]
    assert [b"AUTH", b"(redacted)", b"(redacted)"] in [entry[0] for entry in shown]
    assert [b"set", b"x", b"y"] in [entry[0] for entry in shown]       # a script's call


def test_slowlog_help_matches_redis(both) -> None:
    got = on_both(both, lambda conn: conn.execute_command("SLOWLOG", "HELP"))
    assert got["sluice"] == got["redis"]


def _monitor_lines(port: int, run) -> list:
    """The lines a MONITOR connection hears while `run(conn)` runs on another one,
    with times and client ports masked."""
    with socket.create_connection(("127.0.0.1", port)) as watcher:
        watcher.sendall(b"*1\r\n$7\r\nMONITOR\r\n")
        assert watcher.recv(5) == b"+OK\r\n"
        conn = connect(port)
        try:
            run(conn)
        finally:
            conn.close()
        data = _heard(watcher)
    data = re.sub(rb"\+\d+\.\d{6} \[(\d+) (127\.0\.0\.1:\d+|lua)\]",
                  lambda m: b"+T [%s %s]" % (m.group(1), b"lua" if m.group(2) == b"lua"
                                             else b"ip:port"), data)
    return data.split(b"\r\n")


def _heard(watcher: socket.socket) -> bytes:
    """What a connection has been sent, once it has been quiet for a while."""
    time.sleep(0.3)
    watcher.settimeout(0.5)
    data = b""
    try:
        while chunk := watcher.recv(65536):
            data += chunk
    except socket.timeout:
        pass
    return data


def test_monitor_lines_match_redis(both) -> None:
    def run(conn):
        conn.execute_command("SET", "a", "1")
        conn.execute_command("EVAL", "redis.call('set', 'x', 'y') return 1", "0")
        pipe = conn.pipeline(transaction=True)
        pipe.set("a", "2")
        pipe.incr("a")
        pipe.execute()
        conn.execute_command("CONFIG", "GET", "maxmemory")          # admin: not shown
        raw(conn, "NOSUCHCOMMAND")                                 # refused: not shown
        raw(conn, "GET")
        raw(conn, "AUTH", "pw")
        conn.execute_command("SET", 'a b"c', b"\x01\n\\")
        conn.execute_command("SELECT", "3")
        conn.execute_command("PING")
        conn.execute_command("BLPOP", "nothing", "0.05")
    got = {name: _monitor_lines(port, run) for name, port in both.items()}
    assert got["sluice"] == got["redis"]
    assert b'+T [0 lua] "set" "x" "y"' in got["sluice"]


def test_a_monitor_client_may_not_touch_keys(both) -> None:
    def session(port):
        with socket.create_connection(("127.0.0.1", port)) as conn:
            conn.sendall(b"*1\r\n$7\r\nMONITOR\r\n*1\r\n$7\r\nMONITOR\r\n*2\r\n$3\r\nGET\r\n"
                         b"$1\r\na\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n")
            time.sleep(0.3)
            conn.settimeout(0.5)
            return conn.recv(65536)
    got = {name: session(port) for name, port in both.items()}
    assert got["sluice"] == got["redis"]
    assert got["sluice"].count(b"Replica can't interact with the keyspace") == 2


def resp(*args: str) -> bytes:
    """A command in RESP."""
    return b"*%d\r\n" % len(args) + b"".join(
        b"$%d\r\n%s\r\n" % (len(arg.encode()), arg.encode()) for arg in args)


def test_a_monitor_hears_its_own_commands_after_their_replies(both) -> None:
    """Redis feeds the monitors once a command has run: a MONITOR client's own command
    is answered first, then its line follows (inside EXEC, after EXEC's reply), while
    another client's commands reach it as they run."""
    def session(port):
        with socket.create_connection(("127.0.0.1", port)) as watcher, \
                socket.create_connection(("127.0.0.1", port)) as other:
            watcher.sendall(resp("MONITOR") + resp("PING") + resp("ECHO", "hi"))
            time.sleep(0.2)
            other.sendall(resp("SET", "a", "1") + resp("EVAL", "return redis.call('get', 'a')",
                                                       "0"))
            time.sleep(0.2)
            watcher.sendall(resp("MULTI") + resp("PING") + resp("EXEC") + resp("GET", "a")
                            + resp("CLIENT", "SETNAME", "w") + resp("QUIT"))
            data = _heard(watcher)
        return re.sub(rb"\+\d+\.\d{6} \[0 (127\.0\.0\.1:\d+|lua)\]", b"+T", data).split(b"\r\n")
    got = {name: session(port) for name, port in both.items()}
    assert got["sluice"] == got["redis"]
    lines = got["sluice"]
    assert lines[:5] == [b"+OK", b"+PONG", b'+T "PING"', b"$2", b"hi"]
    assert lines.index(b"*1") < lines.index(b'+T "EXEC"')


def test_latency_monitor_samples_slow_commands(both) -> None:
    def steps(conn):
        conn.execute_command("LATENCY", "RESET")
        conn.execute_command("CONFIG", "SET", "latency-monitor-threshold", "1")
        conn.execute_command("EVAL", LOOP % 3_000_000, "0")            # tens of ms
        latest = conn.execute_command("LATENCY", "LATEST")
        history = conn.execute_command("LATENCY", "HISTORY", "command")
        nothing = conn.execute_command("LATENCY", "HISTORY", "no-such-event")
        errors = [raw(conn, "LATENCY", *args) for args in (
            ("GRAPH", "no-such-event"), ("HISTORY",), ("LATEST", "x"), ("NOPE",))]
        reset = conn.execute_command("LATENCY", "RESET", "command", "no-such-event")
        after = conn.execute_command("LATENCY", "LATEST")
        conn.execute_command("CONFIG", "SET", "latency-monitor-threshold", "0")
        conn.execute_command("SET", "h", "1")
        histogram = conn.execute_command("LATENCY", "HISTOGRAM", "set")
        assert [event for event, *_ in latest] == [b"command"]
        event, when, last, peak = latest[0]
        assert abs(when - time.time()) < 60 and 1 <= last <= peak
        assert len(history) == 1 and history[0][1] == last
        (name, entry), = histogram.items()
        buckets = list(entry[b"histogram_usec"].items()) if b"histogram_usec" in entry else \
            list(entry["histogram_usec"].items())
        counts = [count for _, count in buckets]
        assert counts == sorted(counts) and counts[-1] >= 1
        return nothing, errors, reset, after, name, sorted(entry)
    got = on_both(both, steps)
    assert got["sluice"] == got["redis"]


def test_thresholds_at_their_limits_are_taken(both) -> None:
    """The largest thresholds Redis accepts are accepted (no call reaches them), and the
    server goes on answering."""
    def steps(conn):
        replies = [raw(conn, "CONFIG", "SET", name, value) for name, value in (
            ("latency-monitor-threshold", "9223372036854775807"),
            ("slowlog-log-slower-than", "9223372036854775807"),
            ("slowlog-log-slower-than", "-9223372036854775808"))]
        conn.execute_command("SET", "after", "1")
        replies.append(conn.execute_command("PING"))
        conn.execute_command("CONFIG", "SET", "latency-monitor-threshold", "0")
        conn.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        return replies
    got = on_both(both, steps)
    assert got["sluice"] == got["redis"]


def test_watching_costs_nothing_when_off(both) -> None:
    """With every watcher off, the road's hook threshold says so (INFO shows no slow log
    entries however long a command runs)."""
    conn = connect(both["sluice"])
    try:
        conn.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "-1")
        conn.execute_command("SLOWLOG", "RESET")
        conn.execute_command("EVAL", LOOP % 1_000_000, "0")
        assert conn.execute_command("SLOWLOG", "LEN") == 0
    finally:
        conn.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        conn.close()
