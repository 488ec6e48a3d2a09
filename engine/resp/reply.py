"""Reply value types beyond plain bytes/int/list/None."""


class Status(bytes):
    """A simple-string reply (RESP `+OK`); equal to the same bytes."""

    __slots__ = ()


class BigNumber(bytes):
    """A number's digits sent as RESP3's big number (`(123`); RESP2 clients get them as a
    bulk string (a script's `{big_number=...}` reply)."""

    __slots__ = ()


class Verbatim(bytes):
    """A RESP3 verbatim string reply (`=len fmt:...`: CLIENT INFO/LIST, INFO, a
    script's `{verbatim_string=...}`); a bulk string in RESP2. Equal to the same bytes.
    `format` is its three-byte format, `txt` unless set on the instance."""

    format = b"txt"


class SetReply(list):
    """Members in the order they are sent: RESP3's set (`~n`), RESP2's array (a
    script's `{set=...}` reply, in its Lua table's order)."""

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
