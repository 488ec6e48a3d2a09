"""Raw connections to a local server, for tests that send and read exact bytes, and
replies read as the server sent them."""
from __future__ import annotations

import socket
from typing import Any


def raw_socket(port: int, timeout: float = 5.0) -> socket.socket:
    """A plain TCP connection to a local server, for tests that speak raw bytes."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(timeout)
    return s


def read_all(s: socket.socket, quiet: float) -> tuple:
    """(everything the server sends, whether it closed the connection): reads until
    it closes or stays quiet for `quiet` seconds."""
    s.settimeout(quiet)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out, True
            out += chunk
    except socket.timeout:
        return out, False
    except ConnectionResetError:
        return out, True


def _reply_end(buf: bytes, at: int) -> int:
    """Where the RESP2/RESP3 reply starting at `at` ends; -1 while it is incomplete."""
    line_end = buf.find(b"\r\n", at)
    if line_end < 0:
        return -1
    kind, head, after = buf[at:at + 1], buf[at + 1:line_end], line_end + 2
    if kind in b"$=!" and head != b"-1":               # bulk, verbatim, bulk error
        end = after + int(head) + 2
        return end if len(buf) >= end else -1
    if kind in b"*~>%|" and head not in (b"-1", b"?"):  # aggregates (maps: two per item)
        count = int(head) * (2 if kind in b"%|" else 1)
        for _ in range(count):
            after = _reply_end(buf, after)
            if after < 0:
                return -1
        return _reply_end(buf, after) if kind == b"|" else after   # an attribute precedes its reply
    return after


def read_reply(s: socket.socket, limit: float = 5.0) -> bytes:
    """One whole reply, as the server sent it (waits up to `limit` s for its bytes)."""
    s.settimeout(limit)
    out = b""
    while (end := _reply_end(out, 0) if out else -1) < 0:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed after {out!r}")
        out += chunk
    assert end == len(out), f"more than one reply: {out!r}"
    return out


def read_until_closed(s: socket.socket, limit: float = 5.0) -> bytes:
    """Everything the server sends until it closes the connection (or `limit` s)."""
    return read_all(s, limit)[0]


def raw_call(client: Any, *args: Any) -> Any:
    """A command's reply through a redis-py client, without its response callbacks (an
    error reply raises)."""
    conn = client.connection_pool.get_connection()
    try:
        conn.send_command(*args)
        return conn.read_response()
    finally:
        client.connection_pool.release(conn)
