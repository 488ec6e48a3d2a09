"""Hostile clients against a real sluice-server, all at once, while a well-behaved
client keeps working: garbage bytes, truncated frames, declared-but-never-sent huge
bulks (4 GB over the limit, 400 MB under it), a pipeline of 10^6 commands, a client
that never reads its replies, and a pub/sub subscriber that stops reading. The good
client must get correct answers throughout, with bounded latency, and the server
must end in a sane state (codec-level limits are pinned in tests/resp/test_resp.py).
Run with the AOF off and on with each appendfsync policy: with the AOF on, replies
wait for the round's log write (and with always its fsync), and a connection closed
for a protocol error must still get its error first.
"""
from __future__ import annotations

import random
import socket
import threading
import time

import pytest
import redis

from engine.server.info import parse_info
from raw_io import raw_socket, read_until_closed
from servers import SluiceServer

PIPELINED = 1_000_000
PING = b"*1\r\n$4\r\nPING\r\n"
PONG = b"+PONG\r\n"
PERSISTENCE = {
    "aof off": [],
    "always": ["--appendonly", "yes", "--appendfsync", "always"],
    "everysec": ["--appendonly", "yes", "--appendfsync", "everysec"],
    "no": ["--appendonly", "yes", "--appendfsync", "no"],
}
CUT_FRAME = b"*5\r\n$4\r\nXADD\r\n$3\r\ncut\r\n$1\r\n*\r\n$1\r\nf\r\n$3\r\nval\r\n"


def info(client: redis.Redis, section: str) -> dict:
    conn = client.connection_pool.get_connection()
    try:
        conn.send_command("INFO", section)
        return parse_info(conn.read_response())
    finally:
        client.connection_pool.release(conn)


class Hostile(threading.Thread):
    """Runs `fn` in a thread, keeping its result or exception for the test."""

    def __init__(self, fn, *args) -> None:
        super().__init__(daemon=True)
        self.fn, self.args = fn, args
        self.result = self.error = None

    def run(self) -> None:
        try:
            self.result = self.fn(*self.args)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    def outcome(self, timeout: float = 60.0):
        self.join(timeout)
        assert not self.is_alive(), f"{self.fn.__name__} did not finish"
        if self.error is not None:
            raise self.error
        return self.result


def garbage(port: int, stop: threading.Event) -> int:
    """Random bytes, connection after connection: each ends in a protocol error (or
    unknown-command errors) and a closed connection, never anything else."""
    rng = random.Random(7)
    rounds = 0
    while not stop.is_set() and rounds < 50:
        s = raw_socket(port, 10.0)
        s.sendall(bytes(rng.randrange(256) for _ in range(70_000)))
        out = read_until_closed(s, 10.0)
        s.close()
        assert out.endswith(b"\r\n") and b"Protocol error" in out, out[-200:]
        assert all(line.startswith(b"-ERR") for line in out.split(b"\r\n") if line), out[:200]
        rounds += 1
    return rounds


def truncated_frames(port: int, stop: threading.Event) -> int:
    """Connections that stop in the middle of a command (every cut of an XADD); once
    the test is over they send the rest and must get the right reply."""
    socks = []
    for cut in range(1, len(CUT_FRAME)):
        s = raw_socket(port, 10.0)
        s.sendall(CUT_FRAME[:cut])
        socks.append((s, cut))
    stop.wait()
    for s, cut in socks:
        s.sendall(CUT_FRAME[cut:])
        reply = s.recv(100)
        assert reply.startswith(b"$") and b"-" in reply, (cut, reply)
        s.close()
    return len(socks)


def huge_bulks(port: int) -> int:
    """A 4 GB declared bulk is refused at once; a 400 MB one (under
    proto-max-bulk-len) is accepted and waits for data that never comes; its client
    then goes away, which frees it."""
    s = raw_socket(port, 10.0)
    s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4294967296\r\n")
    assert read_until_closed(s, 10.0) == b"-ERR Protocol error: invalid bulk length\r\n"
    s.close()
    waiting = []
    for _ in range(4):
        s = raw_socket(port, 10.0)
        s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$400000000\r\n" + b"x" * 100_000)
        waiting.append(s)
    time.sleep(1.0)
    for s in waiting:
        s.close()
    return len(waiting)


def million_pipelined(port: int) -> int:
    """10^6 PINGs written while the replies are read by another thread."""
    s = raw_socket(port, timeout=60)
    got = [0]

    def reader():
        pending = b""
        while got[0] < PIPELINED * len(PONG):
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            pending += chunk
            whole = len(pending) - len(pending) % len(PONG)
            assert pending[:whole] == PONG * (whole // len(PONG))
            got[0] += whole
            pending = pending[whole:]

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    batch = PING * 10_000
    for _ in range(PIPELINED // 10_000):
        s.sendall(batch)
    t.join(120)
    s.close()
    return got[0] // len(PONG)


def never_reads(port: int, stop: threading.Event) -> int:
    """Asks for big replies and never reads them (its output must stay bounded)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.setblocking(False)
    request = b"*4\r\n$6\r\nXRANGE\r\n$3\r\nbig\r\n$1\r\n-\r\n$1\r\n+\r\n" * 20
    sent = 0
    while not stop.is_set():
        try:
            sent += s.send(request)
        except BlockingIOError:
            stop.wait(0.05)
        except OSError:
            break
    stop.wait()
    s.close()
    return sent


@pytest.mark.parametrize("persistence", list(PERSISTENCE))
def test_hostile_clients_do_not_disturb_a_good_one(persistence):
    with SluiceServer(PERSISTENCE[persistence]) as srv:
        good = redis.Redis(port=srv.port, protocol=2, socket_timeout=30)
        pipe = good.pipeline(transaction=False)
        for i in range(200):
            pipe.xadd("big", {"payload": "x" * 1000}, id=f"{i + 1}-0")
        pipe.execute()
        stop = threading.Event()
        hostiles = {
            "garbage": Hostile(garbage, srv.port, stop),
            "truncated": Hostile(truncated_frames, srv.port, stop),
            "huge bulks": Hostile(huge_bulks, srv.port),
            "pipeline": Hostile(million_pipelined, srv.port),
            "never reads": Hostile(never_reads, srv.port, stop),
        }
        for h in hostiles.values():
            h.start()
        worst = 0.0
        written = []
        deadline = time.monotonic() + 120
        while hostiles["pipeline"].is_alive() or hostiles["huge bulks"].is_alive() \
                or len(written) < 50:
            assert time.monotonic() < deadline, "the hostile clients took too long"
            t0 = time.monotonic()
            entry_id = good.xadd("good", {"n": len(written)})
            tail = good.xrevrange("good", count=1)
            worst = max(worst, time.monotonic() - t0)
            assert tail == [(entry_id, {b"n": str(len(written)).encode()})]
            written.append(entry_id)
            time.sleep(0.01)
        hogs = [c for c in good.client_list() if c["cmd"] == "xrange"]
        assert len(hogs) == 1 and int(hogs[0]["omem"]) < 8 * 1024 * 1024
        stop.set()
        assert hostiles["pipeline"].outcome() == PIPELINED
        assert hostiles["huge bulks"].outcome() == 4
        assert hostiles["garbage"].outcome() >= 1
        assert hostiles["truncated"].outcome() == len(CUT_FRAME) - 1
        assert hostiles["never reads"].outcome() > 0
        assert worst < 5.0, f"the good client waited {worst:.2f} s for one round trip"
        assert good.xlen("good") == len(written)
        assert [e[0] for e in good.xrange("good")] == written
        assert good.xlen("big") == 200 and good.exists("k") == 0
        assert good.xlen("cut") == len(CUT_FRAME) - 1
        deadline = time.monotonic() + 5
        while int(info(good, "clients")["connected_clients"]) > 1:
            assert time.monotonic() < deadline, good.client_list()
            time.sleep(0.05)
        assert good.ping()
        good.close()
        assert srv.stop() == 0


def subscriber_omem(admin: redis.Redis, name: str):
    """The output bytes the server holds for the named client (None: it is gone)."""
    for c in admin.client_list():
        if c["name"] == name:
            return int(c["omem"])
    return None


def silent_subscriber(port: int, name: str, channel: str) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"CLIENT SETNAME %s\r\nSUBSCRIBE %s\r\n" % (name.encode(), channel.encode()))
    return s


def test_subscriber_that_stops_reading_is_disconnected():
    """client-output-buffer-limit pubsub: the hard limit closes at once, the soft
    limit after its seconds; the publisher is not held up. (The kernel's socket
    buffers take the first megabytes, so the test watches the server's own omem.)"""
    args = ["--client-output-buffer-limit", "pubsub", "1mb", "256kb", "1"]
    with SluiceServer(args) as srv:
        admin = redis.Redis(port=srv.port, protocol=2)
        hard = silent_subscriber(srv.port, "hard", "news")
        soft = silent_subscriber(srv.port, "soft", "quiet")
        time.sleep(0.2)
        assert admin.pubsub_numsub("news", "quiet") == [(b"news", 1), (b"quiet", 1)]
        message = "m" * 50_000
        sent = 0
        while subscriber_omem(admin, "hard") is not None:
            assert sent < 100_000_000, "the hard limit did not close the subscriber"
            assert subscriber_omem(admin, "hard") <= 1024 * 1024 + len(message) + 100
            admin.publish("news", message)
            sent += len(message)
        assert admin.pubsub_numsub("news") == [(b"news", 0)]
        while subscriber_omem(admin, "soft") <= 256 * 1024:      # over the soft limit only
            assert sent < 200_000_000
            admin.publish("quiet", message)
            sent += len(message)
        over_since = time.monotonic()
        time.sleep(0.5)
        assert admin.pubsub_numsub("quiet") == [(b"quiet", 1)]    # not yet
        while admin.pubsub_numsub("quiet") != [(b"quiet", 0)]:
            assert time.monotonic() - over_since < 5, "the soft limit did not close it"
            time.sleep(0.1)
        assert time.monotonic() - over_since >= 1.0
        assert srv.log_text().count("overcoming of output buffer limits") == 2
        assert admin.publish("news", "x") == 0 and admin.ping()
        hard.close()
        soft.close()
        admin.close()
