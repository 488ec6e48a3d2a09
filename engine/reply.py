"""Reply value types beyond plain bytes/int/list/None."""


class Status(bytes):
    """A simple-string reply (RESP `+OK`); equal to the same bytes."""

    __slots__ = ()


OK = Status(b"OK")
PONG = Status(b"PONG")
