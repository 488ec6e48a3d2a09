"""Raw RESP round trips for the hostile-script tests: the exact bytes of a reply, however
deeply nested (redis-py refuses deep replies), with a marker command ending each: an
unknown command, whose error is the same whether a script is busy or not."""
from __future__ import annotations

import socket

from raw_io import raw_socket

MARK = "END-OF-REPLY"
END = b"-ERR unknown command 'END-OF-REPLY', with args beginning with: \r\n"


def encode(*argv) -> bytes:
    out = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def ask(sock: socket.socket, *argv, timeout: float = 30.0) -> bytes:
    """The bytes answering argv."""
    sock.sendall(encode(*argv) + encode(MARK))
    sock.settimeout(timeout)
    data = b""
    while not data.endswith(END):
        chunk = sock.recv(1 << 20)
        assert chunk, f"the server closed the connection after {data[-300:]!r}"
        data += chunk
    return data[:-len(END)]


def ask_once(port: int, *argv, timeout: float = 30.0) -> bytes:
    with raw_socket(port, timeout) as sock:
        return ask(sock, *argv, timeout=timeout)
