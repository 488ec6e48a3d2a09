"""Reply value types beyond plain bytes/int/list/None."""


class Status(bytes):
    """A simple-string reply (RESP `+OK`); equal to the same bytes."""

    __slots__ = ()


OK = Status(b"OK")
PONG = Status(b"PONG")


class _NullArray:
    """A null inside an array that RESP2 must write as `*-1` (not `$-1`).

    Only contexts that ask for exact RESP (the server's) get it in replies; the
    embedded API gets None in the same places."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NULL_ARRAY"


NULL_ARRAY = _NullArray()
