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
