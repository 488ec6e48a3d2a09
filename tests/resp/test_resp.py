"""The RESP codec (engine.resp.codec).

Replies: exact bytes against a spec-level reference encoder and a round trip
through hiredis.Reader for generated nested values; double formatting, null
arrays, push messages and error hygiene pinned against a real redis-server.
Requests: argv round trips of commands packed by redis-py, fed in every / random
chunk splits; inline quoting against redis-server (RPUSH + LRANGE read the split
arguments back); every protocol error and limit, with Redis's exact texts pinned
and checked against redis-server (Debian 7.0), including the tighter limits
before AUTH and the query buffer limit.
"""
from __future__ import annotations

import contextlib
import math
import socket
import time
import tracemalloc

import hiredis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.connection import Connection

from engine.core.errors import ResponseError
from engine.resp.reply import Status
from engine.resp.codec import (
    NULL_ARRAY,
    ProtocolError,
    QueryBufferLimitError,
    ReplyBuffer,
    RequestParser,
    encode_error,
    encode_push,
    encode_reply,
    split_inline,
)
from servers import RedisServer

_CONN = Connection()


def pack(argv) -> bytes:
    """A command exactly as redis-py puts it on the wire."""
    return b"".join(_CONN.pack_command(*argv))


def parse_all(pieces, **kwargs) -> list:
    parser = RequestParser(**kwargs)
    got = []
    for piece in pieces:
        parser.feed(piece)
        got += parser.get_commands()
    assert parser.pending == 0
    assert not parser.in_command
    return got


# ---------------------------------------------------------------------------
# A throw-away redis-server (plain, and one with requirepass)

PASSWORD = b"sluice-pw"
_INCOMPLETE = object()


def _redis(tmp_path_factory, *extra: str):
    with RedisServer(["--save", "", "--appendonly", "no", "--loglevel", "warning", *extra],
                     workdir=tmp_path_factory.mktemp("resp-redis")) as srv:
        yield srv.port


@pytest.fixture(scope="module")
def redis_port(tmp_path_factory):
    yield from _redis(tmp_path_factory)


@pytest.fixture(scope="module")
def auth_redis_port(tmp_path_factory):
    yield from _redis(tmp_path_factory, "--requirepass", PASSWORD.decode())


def exchange(port: int, data: bytes) -> bytes:
    """Sends data, half-closes, and returns everything the server wrote before it
    closed (replies, then its protocol error if any)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:     # the server may already have closed the connection
            pass
        out = bytearray()
        while True:
            try:
                chunk = sock.recv(1 << 20)
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
    return bytes(out)


class RawClient:
    """One connection; `call` returns the raw bytes of one reply."""

    def __init__(self, port: int, resp3: bool = False) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if resp3:
            self.call(b"HELLO", b"3")

    def send(self, argv) -> None:
        self.sock.sendall(pack(argv))

    def read_reply(self) -> bytes:
        reader = hiredis.Reader(notEnoughData=_INCOMPLETE)
        raw = bytearray()
        while True:
            chunk = self.sock.recv(65536)
            assert chunk, "server closed the connection"
            raw += chunk
            reader.feed(chunk)
            if reader.gets() is not _INCOMPLETE:
                assert reader.gets() is _INCOMPLETE, "more than one reply arrived"
                return bytes(raw)

    def call(self, *argv) -> bytes:
        self.send(argv)
        return self.read_reply()

    def close(self) -> None:
        self.sock.close()


@contextlib.contextmanager
def raw_client(port: int, resp3: bool, *cleanup: bytes):
    """A RawClient that runs the cleanup command (a DEL of what the test wrote, or
    FLUSHALL) on the way out, then closes."""
    client = RawClient(port, resp3)
    try:
        yield client
    finally:
        client.call(*cleanup)
        client.close()


# ---------------------------------------------------------------------------
# Replies: exact encodings

INT64 = (-(2 ** 63), 2 ** 63 - 1)


def _bulk(data: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(data), data)


def _double_text(v: float) -> bytes:
    if math.isinf(v):
        return b"inf" if v > 0 else b"-inf"
    return b"%.17g" % v


def ref_encode(o, resp3: bool, null_array: bool = False, top: bool = True) -> bytes:
    """A direct transcription of the RESP2/RESP3 specs (and Redis 7.0's choices)."""
    if o is None:
        return b"_\r\n" if resp3 else (b"*-1\r\n" if top and null_array else b"$-1\r\n")
    if o is NULL_ARRAY:
        return b"_\r\n" if resp3 else b"*-1\r\n"
    if isinstance(o, Status):
        return b"+" + bytes(o) + b"\r\n"
    if isinstance(o, bytes):
        return _bulk(o)
    if isinstance(o, bool):
        return (b"#t\r\n" if o else b"#f\r\n") if resp3 else (b":1\r\n" if o else b":0\r\n")
    if isinstance(o, int):
        if INT64[0] <= o <= INT64[1]:
            return b":%d\r\n" % o
        return b"(%d\r\n" % o if resp3 else _bulk(b"%d" % o)
    if isinstance(o, float):
        return b"," + _double_text(o) + b"\r\n" if resp3 else _bulk(_double_text(o))
    if isinstance(o, (list, tuple)):
        return b"*%d\r\n" % len(o) + b"".join(ref_encode(x, resp3, top=False) for x in o)
    if isinstance(o, dict):
        head = b"%%%d\r\n" % len(o) if resp3 else b"*%d\r\n" % (2 * len(o))
        return head + b"".join(ref_encode(k, resp3, top=False) + ref_encode(v, resp3, top=False)
                               for k, v in o.items())
    if isinstance(o, Exception):
        return b"-" + str(o).encode() + b"\r\n"
    raise TypeError(o)


def hiredis_view(o, resp3: bool):
    """What hiredis.Reader should give back for an encoded value."""
    if o is None or o is NULL_ARRAY:
        return None
    if isinstance(o, bytes):
        return bytes(o)
    if isinstance(o, bool):
        return o if resp3 else int(o)
    if isinstance(o, int):
        return o if INT64[0] <= o <= INT64[1] else b"%d" % o
    if isinstance(o, float):
        return o if resp3 else _double_text(o)
    if isinstance(o, (list, tuple)):
        return [hiredis_view(x, resp3) for x in o]
    if isinstance(o, dict):
        if resp3:
            return {k: hiredis_view(v, resp3) for k, v in o.items()}
        return [y for k, v in o.items() for y in (hiredis_view(k, resp3), hiredis_view(v, resp3))]
    if isinstance(o, Exception):
        return ("error", str(o))
    raise TypeError(o)


def normalize(parsed):
    if isinstance(parsed, hiredis.ReplyError):
        return ("error", str(parsed))
    if isinstance(parsed, list):
        return [normalize(x) for x in parsed]
    if isinstance(parsed, dict):
        return {k: normalize(v) for k, v in parsed.items()}
    return parsed


def hiredis_parse(data: bytes):
    reader = hiredis.Reader(notEnoughData=_INCOMPLETE)
    reader.feed(data)
    out = reader.gets()
    assert out is not _INCOMPLETE, "incomplete reply"
    assert reader.gets() is _INCOMPLETE, "trailing bytes after the reply"
    return normalize(out)


_ascii = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=20)
reply_leaves = st.one_of(
    st.binary(max_size=40),
    st.binary(max_size=20).filter(lambda b: b"\r" not in b and b"\n" not in b).map(Status),
    st.integers(*INT64),
    st.integers(min_value=2 ** 63, max_value=2 ** 80) | st.integers(min_value=-(2 ** 80),
                                                                     max_value=-(2 ** 63) - 1),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.just(NULL_ARRAY),
    _ascii.map(lambda t: ResponseError("ERR " + t)),
)
reply_values = st.recursive(
    reply_leaves,
    lambda kids: st.one_of(st.lists(kids, max_size=5),
                           st.dictionaries(st.binary(max_size=8), kids, max_size=4)),
    max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(reply_values, st.booleans(), st.booleans())
def test_encode_matches_reference_and_hiredis(value, resp3, null_array):
    data = encode_reply(value, resp3, null_array)
    assert data == ref_encode(value, resp3, null_array)
    assert hiredis_parse(data) == hiredis_view(value, resp3)
    buf = ReplyBuffer()
    buf.write(value, resp3, null_array)
    buf.write(value, resp3, null_array)
    assert buf.take() == data * 2
    assert len(buf) == 0


@pytest.mark.parametrize("value, resp2, resp3", [
    (b"", b"$0\r\n\r\n", b"$0\r\n\r\n"),
    (b"a\r\nb", b"$4\r\na\r\nb\r\n", b"$4\r\na\r\nb\r\n"),
    (Status(b"OK"), b"+OK\r\n", b"+OK\r\n"),
    (0, b":0\r\n", b":0\r\n"),
    (-(2 ** 63), b":-9223372036854775808\r\n", b":-9223372036854775808\r\n"),
    (2 ** 63, b"$19\r\n9223372036854775808\r\n", b"(9223372036854775808\r\n"),
    (True, b":1\r\n", b"#t\r\n"),
    (False, b":0\r\n", b"#f\r\n"),
    (None, b"$-1\r\n", b"_\r\n"),
    (NULL_ARRAY, b"*-1\r\n", b"_\r\n"),
    ([], b"*0\r\n", b"*0\r\n"),
    ((b"a", 1), b"*2\r\n$1\r\na\r\n:1\r\n", b"*2\r\n$1\r\na\r\n:1\r\n"),
    ([None, NULL_ARRAY], b"*2\r\n$-1\r\n*-1\r\n", b"*2\r\n_\r\n_\r\n"),
    ({b"k": 1}, b"*2\r\n$1\r\nk\r\n:1\r\n", b"%1\r\n$1\r\nk\r\n:1\r\n"),
    ({b"x"}, b"*1\r\n$1\r\nx\r\n", b"~1\r\n$1\r\nx\r\n"),
    (1.5, b"$3\r\n1.5\r\n", b",1.5\r\n"),
    (0.1, b"$19\r\n0.10000000000000001\r\n", b",0.10000000000000001\r\n"),
    (float("inf"), b"$3\r\ninf\r\n", b",inf\r\n"),
    (float("-inf"), b"$4\r\n-inf\r\n", b",-inf\r\n"),
    (float("nan"), b"$3\r\nnan\r\n", b",nan\r\n"),
    ("héllo", b"$6\r\nh\xc3\xa9llo\r\n", b"$6\r\nh\xc3\xa9llo\r\n"),
    (bytearray(b"ab"), b"$2\r\nab\r\n", b"$2\r\nab\r\n"),
    (ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
     b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
     b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ([ResponseError("ERR a\r\nb\n")], b"*1\r\n-ERR a  b\r\n", b"*1\r\n-ERR a  b\r\n"),
])
def test_encode_exact(value, resp2, resp3):
    assert encode_reply(value, False) == resp2
    assert encode_reply(value, True) == resp3


def test_top_level_null_array_flag():
    assert encode_reply(None, False, True) == b"*-1\r\n"
    assert encode_reply(None, True, True) == b"_\r\n"
    # the flag is about the reply itself: nested Nones stay null bulks
    assert encode_reply([None], False, True) == b"*1\r\n$-1\r\n"
    assert encode_reply(NULL_ARRAY, False, False) == b"*-1\r\n"


def test_encode_error_hygiene():
    assert encode_error("ERR syntax error") == b"-ERR syntax error\r\n"
    assert encode_error("ERR multi\nline\r\ntext\r\n") == b"-ERR multi line  text\r\n"
    assert encode_error("\r\nERR x") == b"-ERR x\r\n"
    assert encode_error(b"ERR raw bytes \xff") == b"-ERR raw bytes \xff\r\n"
    assert encode_error("-ERR already prefixed") == b"-ERR already prefixed\r\n"
    assert encode_error(str(ProtocolError("ERR Protocol error: invalid bulk length"))) == \
        b"-ERR Protocol error: invalid bulk length\r\n"


def test_encode_push():
    assert encode_push([b"message", b"ch", b"hi"], True) == \
        b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
    assert encode_push([b"subscribe", b"ch", 1], False) == \
        b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    reader = hiredis.Reader()
    reader.feed(encode_push([b"message", b"ch", b"hi"], True))
    pushed = reader.gets()
    assert isinstance(pushed, hiredis.PushNotification) and pushed == [b"message", b"ch", b"hi"]


def test_encode_rejects_unknown_types_and_rolls_back():
    with pytest.raises(TypeError):
        encode_reply(object())
    buf = ReplyBuffer()
    buf.write(b"ok")
    with pytest.raises(TypeError):
        buf.write([b"a", [1, object()]])
    assert buf.take() == b"$2\r\nok\r\n"
    deep = []
    for _ in range(2000):
        deep = [deep]
    with pytest.raises(ValueError):
        encode_reply(deep)


def test_reply_buffer_mixed():
    buf = ReplyBuffer()
    buf.write(Status(b"OK"))
    buf.write_error("ERR x")
    buf.write_push([b"message", b"c", b"m"], True)
    buf.write_raw(b"+RAW\r\n")
    buf.write(None, False, True)
    assert buf.take() == (b"+OK\r\n-ERR x\r\n>3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n"
                          b"+RAW\r\n*-1\r\n")
    big = b"x" * (3 << 20)
    buf.write([big, big])
    assert buf.take() == b"*2\r\n" + _bulk(big) * 2
    assert buf.take() == b""


# ---------------------------------------------------------------------------
# Replies against redis-server

@pytest.mark.parametrize("resp3", [False, True])
def test_doubles_match_redis(redis_port, resp3):
    with raw_client(redis_port, resp3, b"DEL", b"z") as client:
        for text in [b"0.1", b"1", b"1.5", b"-2.25", b"1e300", b"3.141592653589793", b"1e-7",
                     b"123456789012345678", b"inf", b"-inf", b"0", b"5e-324"]:
            client.call(b"ZADD", b"z", text, b"m")
            assert client.call(b"ZSCORE", b"z", b"m") == encode_reply(float(text), resp3), text


@pytest.mark.parametrize("resp3", [False, True])
def test_null_array_inside_xreadgroup_history_matches_redis(redis_port, resp3):
    with raw_client(redis_port, resp3, b"DEL", b"hs") as client:
        client.call(b"DEL", b"hs")
        client.call(b"XGROUP", b"CREATE", b"hs", b"g", b"0", b"MKSTREAM")
        client.call(b"XADD", b"hs", b"1-1", b"f", b"v")
        client.call(b"XADD", b"hs", b"2-1", b"f", b"w")
        client.call(b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"hs", b">")
        client.call(b"XDEL", b"hs", b"1-1")
        raw = client.call(b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"hs", b"0")
        entries = [[b"1-1", NULL_ARRAY], [b"2-1", [b"f", b"w"]]]
        reply = {b"hs": entries} if resp3 else [[b"hs", entries]]
        assert raw == encode_reply(reply, resp3)
        # and XREAD with nothing to read: the top-level null array
        raw = client.call(b"XREAD", b"STREAMS", b"hs", b"9-9")
        assert raw == encode_reply(None, resp3, True)


@pytest.mark.parametrize("resp3", [False, True])
def test_null_array_in_empty_xpending_summary_matches_redis(redis_port, resp3):
    """The other nested null array of Redis: XPENDING's summary of an empty PEL is
    [0, nil, nil, nil-array]."""
    with raw_client(redis_port, resp3, b"DEL", b"ps") as client:
        client.call(b"DEL", b"ps")
        client.call(b"XGROUP", b"CREATE", b"ps", b"g", b"$", b"MKSTREAM")
        raw = client.call(b"XPENDING", b"ps", b"g")
        assert raw == encode_reply([0, None, None, NULL_ARRAY], resp3)


@pytest.mark.parametrize("resp3", [False, True])
def test_push_and_errors_match_redis(redis_port, resp3):
    sub = RawClient(redis_port, resp3)
    pub = RawClient(redis_port)
    try:
        assert sub.call(b"SUBSCRIBE", b"ch") == encode_push([b"subscribe", b"ch", 1], resp3)
        pub.call(b"PUBLISH", b"ch", b"payload")
        assert sub.read_reply() == encode_push([b"message", b"ch", b"payload"], resp3)
        # Redis turns CR/LF inside an error text into spaces
        raw = pub.call(b"NO\nSUCH\r\nCMD", b"a")
        assert raw == encode_error("ERR unknown command 'NO\nSUCH\r\nCMD', "
                                   "with args beginning with: 'a' ")
        assert pub.call(b"GET") == encode_error("ERR wrong number of arguments for 'get' command")
    finally:
        sub.close()
        pub.close()


ENGINE_SCRIPT = [
    [b"PING"], [b"PING", b"hello"], [b"ECHO", b"x\r\ny"], [b"SET", b"k", b"v"], [b"GET", b"k"],
    [b"GET", b"missing"], [b"INCR", b"n"], [b"TTL", b"k"], [b"TYPE", b"k"],
    [b"XADD", b"s", b"1-1", b"a", b"1", b"b", b"2"], [b"XADD", b"s", b"2-1", b"c", b"3"],
    [b"XADD", b"s", b"1-1", b"x", b"y"], [b"GET", b"s"], [b"XLEN", b"s"], [b"TYPE", b"s"],
    [b"XRANGE", b"s", b"-", b"+"], [b"XREVRANGE", b"s", b"+", b"-", b"COUNT", b"1"],
    [b"XRANGE", b"nokey", b"-", b"+"], [b"XREAD", b"COUNT", b"10", b"STREAMS", b"s", b"0"],
    [b"XREAD", b"STREAMS", b"s", b"5-0"], [b"XREAD", b"STREAMS", b"s", b"nokey", b"0", b"0"],
    [b"XGROUP", b"CREATE", b"s", b"g", b"0"],
    [b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"1", b"STREAMS", b"s", b">"],
    [b"XPENDING", b"s", b"g"], [b"XACK", b"s", b"g", b"1-1"],
    [b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"s", b">"],
    [b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"s", b">"],
    [b"XINFO", b"GROUPS", b"s"],
    [b"XTRIM", b"s", b"MAXLEN", b"1"], [b"XDEL", b"s", b"9-9"], [b"EXISTS", b"s", b"k"],
    [b"DEL", b"k", b"s", b"n"], [b"NOSUCHCOMMAND", b"a"],
]


@pytest.mark.parametrize("resp3", [False, True])
def test_engine_replies_encode_like_redis(redis_port, resp3):
    """The engine's reply values, encoded, are byte-identical to Redis's replies."""
    from engine import Engine

    eng = Engine()
    ctx = eng.new_context(resp3=resp3)
    with raw_client(redis_port, resp3, b"FLUSHALL") as client:
        client.call(b"FLUSHALL")
        for argv in ENGINE_SCRIPT:
            try:
                ours = encode_reply(eng.execute_in(ctx, list(argv)), resp3, ctx.null_array)
            except ResponseError as err:
                ours = encode_error(str(err))
            assert ours == client.call(*argv), argv


# ---------------------------------------------------------------------------
# Requests: multibulk round trips

first_args = st.binary(min_size=1, max_size=12).filter(lambda b: b" " not in b)
argvs = st.builds(lambda head, rest: [head] + rest, first_args,
                  st.lists(st.binary(max_size=30), max_size=6))


@settings(max_examples=300, deadline=None)
@given(st.lists(argvs, min_size=1, max_size=8), st.data())
def test_multibulk_random_splits(commands, data):
    wire = b"".join(pack(c) for c in commands)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=12)))
    pieces = [wire[a:b] for a, b in zip([0] + cuts, cuts + [len(wire)])]
    assert parse_all(pieces) == commands


SMALL_PIPELINE = [[b"XADD", b"s", b"*", b"f", b"v"], [b"SET", b"", b"\r\n\x00\xff"], [b"PING"]]


def test_every_split_point_and_byte_by_byte():
    wire = b"".join(pack(c) for c in SMALL_PIPELINE) + b"PING  \"a b\"\r\n\r\nECHO x\n"
    expected = SMALL_PIPELINE + [[b"PING", b"a b"], [b"ECHO", b"x"]]
    for i in range(len(wire) + 1):
        assert parse_all([wire[:i], wire[i:]]) == expected, i
    for i in range(0, len(wire) + 1, 3):
        for j in range(i, len(wire) + 1):
            assert parse_all([wire[:i], wire[i:j], wire[j:]]) == expected, (i, j)
    assert parse_all([wire[i:i + 1] for i in range(len(wire))]) == expected


@pytest.mark.parametrize("size", [32767, 32768, 100_000])
def test_big_bulk_every_split_near_boundaries(size):
    big = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    cmds = [[b"SET", b"k", big], [b"PING"]]
    wire = b"".join(pack(c) for c in cmds)
    header_end = wire.index(big)
    body_end = header_end + size
    points = set()
    for edge in (header_end, body_end, len(wire) - 14):
        points.update(range(max(0, edge - 20), min(len(wire), edge + 21)))
    points.update(range(0, len(wire), 4099))
    for i in sorted(points):
        assert parse_all([wire[:i], wire[i:]]) == cmds, i
    for i, j in [(header_end - 1, body_end + 1), (header_end, body_end), (header_end + 5, body_end + 2)]:
        assert parse_all([wire[:i], wire[i:j], wire[j:]]) == cmds
    assert parse_all([wire[i:i + 1000] for i in range(0, len(wire), 1000)]) == cmds


def test_big_bulk_is_read_in_place():
    """A 64 MiB argument arriving in 64 KiB chunks goes straight into its bytes
    object: the parser's own buffer never grows with it."""
    size = 64 << 20
    parser = RequestParser()
    parser.feed(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % size)
    assert parser.get_commands() == []
    chunk = b"y" * 65536
    start = time.perf_counter()
    for _ in range(size // len(chunk)):
        parser.feed(chunk)
        assert parser.get_commands() == []
        assert parser.capacity <= 65536
    assert parser.pending == size
    parser.feed(b"\r\n*1\r\n$4\r\nPING\r\n")
    (echo, ping) = parser.get_commands()
    elapsed = time.perf_counter() - start
    assert echo[0] == b"ECHO" and len(echo[1]) == size and echo[1].count(b"y") == size
    assert ping == [b"PING"]
    assert elapsed < 5


def test_bulk_trailing_crlf_is_not_checked():
    # Redis skips the two bytes after a bulk without looking at them
    assert parse_all([b"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n"]) == [[b"PING"], [b"PING"]]
    assert parse_all([b"*1\rX$4\rXPING\r\n"]) == [[b"PING"]]
    big = b"b" * 40000
    wire = b"*2\r\n$4\r\nECHO\r\n$40000\r\n" + big + b"xy*1\r\n$4\r\nPING\r\n"
    at = wire.index(b"xy")
    for i in [10, 30, at - 1, at, at + 1, at + 2, at + 3]:
        assert parse_all([wire[:i], wire[i:]]) == [[b"ECHO", big], [b"PING"]], i
        if i <= at + 1:
            assert parse_all([wire[:i], wire[i:at + 1], wire[at + 1:]]) == [[b"ECHO", big], [b"PING"]]


def test_error_text_has_no_raw_newlines():
    with pytest.raises(ProtocolError) as info:
        _get_all(b"*1\r\n\r\n")
    assert str(info.value) == "ERR Protocol error: expected '$', got ' '"


def test_empty_and_negative_multibulk_are_skipped():
    assert parse_all([b"*0\r\n*-1\r\n*-10\r\n\r\n  \t\r\n*1\r\n$4\r\nPING\r\n"]) == [[b"PING"]]


def test_pipeline_of_100k_commands_in_one_feed():
    n = 100_000
    wire = pack([b"XADD", b"s", b"*", b"f", b"v"]) * n
    parser = RequestParser()
    start = time.perf_counter()
    parser.feed(wire)
    commands = parser.get_commands()
    elapsed = time.perf_counter() - start
    assert len(commands) == n and commands[-1] == [b"XADD", b"s", b"*", b"f", b"v"]
    assert parser.pending == 0
    assert elapsed < 1.0


def test_iteration_and_get_command():
    parser = RequestParser()
    parser.feed(b"PING\r\n*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n*1\r\n$4\r\nPI")
    assert next(parser) == [b"PING"]
    assert parser.get_command() == [b"ECHO", b"x"]
    assert parser.get_command() is None
    assert list(parser) == []
    assert parser.in_command
    parser.feed(b"NG\r\n")
    assert list(parser) == [[b"PING"]]
    assert not parser.in_command


def test_feed_accepts_buffers():
    parser = RequestParser()
    parser.feed(bytearray(b"*1\r\n$4\r\n"))
    parser.feed(memoryview(b"xPINGx")[1:5])
    parser.feed(b"\r\n")
    assert parser.get_commands() == [[b"PING"]]


# ---------------------------------------------------------------------------
# Requests: inline commands

@pytest.mark.parametrize("line, argv", [
    (b"", []),
    (b"   \t ", []),
    (b"set a b", [b"set", b"a", b"b"]),
    (b"  a   b\tc\rd ", [b"a", b"b", b"c", b"d"]),
    (b"a\x0bb \x0cc", [b"a\x0bb", b"c"]),           # \v \f do not end a bare word
    (b'"a b" c', [b"a b", b"c"]),
    (b'"\\n\\r\\t\\b\\a\\\\\\"\\q"', [b"\n\r\t\b\a\\\"q"]),
    (b'"\\x41\\x4a\\x4\\xzz\\xFf"', [b"AJx4xzz\xff"]),
    (b"'it\\'s' 'a\\nb'", [b"it's", b"a\\nb"]),
    (b'a"b c"', [b"ab c"]),
    (b"a'b c'", [b"ab c"]),
    (b'""', [b""]),
    (b"'' x", [b"", b"x"]),
    (b'"a"\x0b', [b"a"]),
    (b'"a"b', None),
    (b"'a'b", None),
    (b'"abc', None),
    (b"'abc", None),
    (b'"\\', None),
    (b"\xff\xfe", [b"\xff\xfe"]),
])
def test_split_inline(line, argv):
    assert split_inline(line) == argv


def test_inline_line_endings():
    assert parse_all([b"a b\r\nc\nd\r\r\n"]) == [[b"a", b"b"], [b"c"], [b"d"]]
    with pytest.raises(ProtocolError, match=r"^ERR Protocol error: unbalanced quotes in request$"):
        _get_all(b'PING "a\r\n')


def _get_all(data: bytes, **kwargs):
    parser = RequestParser(**kwargs)
    parser.feed(data)
    return parser.get_commands()


inline_alphabet = st.sampled_from([b"a", b"b", b" ", b"  ", b"\t", b"\x0b", b"\x0c", b"\r", b'"',
                                   b"'", b"\\", b"x", b"4", b"f", b"G", b"n", b"\xff"])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(inline_alphabet, max_size=14).map(b"".join))
def test_inline_quoting_matches_redis(redis_port, text):
    """RPUSH k _ <text> as an inline command, then LRANGE returns how Redis split it."""
    line = b"RPUSH inl _ " + text + b"\r\n"
    tail = pack([b"LRANGE", b"inl", b"0", b"-1"]) + pack([b"DEL", b"inl"])
    parser = RequestParser()
    parser.feed(line)
    try:
        (argv,) = parser.get_commands()
    except ProtocolError as err:
        expected = encode_error(str(err))
    else:
        assert argv[:3] == [b"RPUSH", b"inl", b"_"]
        expected = (encode_reply(len(argv) - 2) + encode_reply(argv[2:]) + b":1\r\n")
    assert exchange(redis_port, line + tail) == expected


# ---------------------------------------------------------------------------
# Protocol errors and limits: Redis's exact texts, pinned and checked against Redis

def _fake_server(data: bytes, authenticated: bool = True, chunk: int = 16384, **limits) -> bytes:
    """What a server built on the parser writes for `data` (read in 16 KiB
    chunks, like Redis) for a connection that sends only PING/ECHO/AUTH."""
    parser = RequestParser(authenticated=authenticated, **limits)
    out = bytearray()
    for i in range(0, max(len(data), 1), chunk):
        try:
            parser.feed(data[i:i + chunk])
        except QueryBufferLimitError:
            return bytes(out)                       # closed without a reply
        while True:
            try:
                commands = parser.get_commands()
            except ProtocolError as err:
                return bytes(out + encode_error(str(err)))
            if not commands:
                break
            for argv in commands:
                name = argv[0].upper()
                if name == b"AUTH":
                    assert argv[1] == PASSWORD
                    parser.authenticated = True
                    out += b"+OK\r\n"
                elif not parser.authenticated:
                    out += b"-NOAUTH Authentication required.\r\n"
                elif name == b"PING" and len(argv) > 2:
                    out += encode_error("ERR wrong number of arguments for 'ping' command")
                elif name == b"PING":
                    out += encode_reply(Status(b"PONG") if len(argv) == 1 else argv[1])
                elif name == b"ECHO":
                    out += encode_reply(argv[1])
                else:
                    raise AssertionError(argv)
    return bytes(out)


def _err(text: str) -> bytes:
    return b"-ERR Protocol error: " + text.encode("latin-1") + b"\r\n"


PONG = b"+PONG\r\n"
PROTOCOL_CASES = {
    "mbulk>INT_MAX": (b"*2147483648\r\n", _err("invalid multibulk length")),
    "mbulk=INT_MAX": (b"*2147483647\r\n", b""),
    "mbulk 3e9": (b"*3000000000\r\n", _err("invalid multibulk length")),
    "mbulk 20 digits": (b"*99999999999999999999\r\n", _err("invalid multibulk length")),
    "mbulk plus": (b"*+1\r\n$4\r\nPING\r\n", _err("invalid multibulk length")),
    "mbulk leading zero": (b"*01\r\n$4\r\nPING\r\n", _err("invalid multibulk length")),
    "mbulk empty": (b"*\r\n", _err("invalid multibulk length")),
    "mbulk space": (b"*1 \r\n", _err("invalid multibulk length")),
    "mbulk -0": (b"*-0\r\n", _err("invalid multibulk length")),
    "mbulk negative": (b"*-10\r\nPING\r\n", PONG),
    "mbulk zero": (b"*0\r\nPING\r\n", PONG),
    "bulk negative": (b"*1\r\n$-1\r\n", _err("invalid bulk length")),
    "bulk > 512MB": (b"*1\r\n$536870913\r\n", _err("invalid bulk length")),
    "bulk 4GB": (b"*1\r\n$4294967296\r\n", _err("invalid bulk length")),
    "bulk 20 digits": (b"*1\r\n$99999999999999999999\r\n", _err("invalid bulk length")),
    "bulk leading zero": (b"*1\r\n$04\r\nPING\r\n", _err("invalid bulk length")),
    "bulk plus": (b"*1\r\n$+4\r\nPING\r\n", _err("invalid bulk length")),
    "bulk empty": (b"*1\r\n$\r\n", _err("invalid bulk length")),
    "expected $ x": (b"*1\r\nx4\r\n", _err("expected '$', got 'x'")),
    "expected $ CR": (b"*1\r\n\r\n", _err("expected '$', got ' '")),
    "expected $ LF": (b"*1\r\n\n\r\n", _err("expected '$', got ' '")),
    "expected $ 0xff": (b"*1\r\n\xff\r\n", _err("expected '$', got '\xff'")),
    "expected $ after args": (b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n", _err("expected '$', got 'f'")),
    "expected $ waits for CR": (b"*1\r\nx", b""),
    "unbalanced double": (b'PING\r\nPING "a\r\nPING\r\n', PONG + _err("unbalanced quotes in request")),
    "unbalanced single": (b"PING 'a\r\n", _err("unbalanced quotes in request")),
    "quote then char": (b'ECHO "a"b\r\n', _err("unbalanced quotes in request")),
    "too big inline": (b"x" * 70000, _err("too big inline request")),
    "inline 64 KiB waits": (b"x" * 65536, b""),
    "inline 64 KiB + 1": (b"x" * 65537, _err("too big inline request")),
    "mbulk count 64 KiB waits": (b"*" + b"1" * 65535, b""),
    "mbulk count 64 KiB + 1": (b"*" + b"1" * 65536, _err("too big mbulk count string")),
    "bulk count 64 KiB + 1": (b"*1\r\n$" + b"1" * 65536, _err("too big bulk count string")),
    "too big mbulk count": (b"*" + b"1" * 70000, _err("too big mbulk count string")),
    "too big bulk count": (b"PING\r\n*1\r\n" + b"x" * 70000, PONG + _err("too big bulk count string")),
    "inline waits at NUL": (b"PING\r\nPING \x00\r\nPING\r\n", PONG),
    "NUL hang then too big": (b"PING \x00\r\n" + b"y" * 70000 + b"\r\n", _err("too big inline request")),
    "bulk count NUL": (b"*1\r\n$4\x00\r\nPING\r\n", b""),
    "CRLF not checked": (b"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n", PONG + PONG),
    "CR then any byte": (b"*1\rX$4\rXPING\r\n", PONG),
    "mixed pipeline": (b"\r\n  \r\nPING\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\nECHO 'a b'\r\n",
                       PONG + b"$0\r\n\r\n$3\r\na b\r\n"),
    "big echo": (pack([b"ECHO", b"q" * 100_000]), _bulk(b"q" * 100_000)),
    "inline line 60k": (b"ECHO " + b"w" * 60_000 + b"\r\n", _bulk(b"w" * 60_000)),
}

AUTH = pack([b"AUTH", PASSWORD])
UNAUTH_CASES = {
    "mbulk 11": (b"*11\r\n", _err("unauthenticated multibulk length")),
    "mbulk 10": (b"*10\r\n", b""),
    "mbulk huge": (b"*1048577\r\n", _err("unauthenticated multibulk length")),
    "mbulk > INT_MAX first": (b"*2147483648\r\n", _err("invalid multibulk length")),
    "bulk 16385": (b"*1\r\n$16385\r\n", _err("unauthenticated bulk length")),
    "bulk 16384": (b"*1\r\n$16384\r\n", b""),
    "bulk > 512MB first": (b"*1\r\n$536870913\r\n", _err("invalid bulk length")),
    "noauth then error": (b"PING\r\n*11\r\n", b"-NOAUTH Authentication required.\r\n"
                          + _err("unauthenticated multibulk length")),
    "auth lifts limits": (AUTH + pack([b"ECHO", b"e" * 20000]) + b"*11\r\n",
                          b"+OK\r\n" + _bulk(b"e" * 20000)),
    "auth then 12 args": (AUTH + pack([b"PING"] + [b"x"] * 11), b"+OK\r\n"
                          + b"-ERR wrong number of arguments for 'ping' command\r\n"),
}


@pytest.mark.parametrize("case", list(PROTOCOL_CASES))
def test_protocol_error_pinned(case):
    data, expected = PROTOCOL_CASES[case]
    assert _fake_server(data) == expected


@pytest.mark.parametrize("case", list(PROTOCOL_CASES))
def test_protocol_error_matches_redis(redis_port, case):
    data, expected = PROTOCOL_CASES[case]
    assert exchange(redis_port, data) == expected


@pytest.mark.parametrize("case", list(UNAUTH_CASES))
def test_unauthenticated_limits_pinned(case):
    data, expected = UNAUTH_CASES[case]
    assert _fake_server(data, authenticated=False) == expected


@pytest.mark.parametrize("case", list(UNAUTH_CASES))
def test_unauthenticated_limits_match_redis(auth_redis_port, case):
    data, expected = UNAUTH_CASES[case]
    assert exchange(auth_redis_port, data) == expected


def test_protocol_error_after_valid_commands():
    parser = RequestParser()
    parser.feed(b"PING\r\n*1\r\n$4\r\nPING\r\n*1\r\n$-5\r\nPING\r\n")
    assert parser.get_commands() == [[b"PING"], [b"PING"]]
    assert str(parser.error) == "ERR Protocol error: invalid bulk length"
    for _ in range(2):       # sticky: the connection must be closed
        with pytest.raises(ProtocolError, match=r"^ERR Protocol error: invalid bulk length$"):
            parser.get_commands()
    with pytest.raises(ProtocolError):
        parser.get_command()
    parser.feed(b"PING\r\n")  # ignored
    with pytest.raises(ProtocolError):
        next(parser)


def test_custom_bulk_limit():
    assert _get_all(b"*1\r\n$100\r\n" + b"a" * 100 + b"\r\n", proto_max_bulk_len=100) == [[b"a" * 100]]
    with pytest.raises(ProtocolError, match="invalid bulk length"):
        _get_all(b"*1\r\n$101\r\n", proto_max_bulk_len=100)


def test_declared_4gb_bulk_fails_without_allocating():
    tracemalloc.start()
    try:
        parser = RequestParser()
        parser.feed(b"*2\r\n$3\r\nSET\r\n$4294967296\r\n")
        with pytest.raises(ProtocolError, match="^ERR Protocol error: invalid bulk length$"):
            parser.get_commands()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert parser.capacity <= 65536
    # the declared count of a multibulk is not allocated either
    parser = RequestParser()
    parser.feed(b"*2147483647\r\n$4\r\nPING\r\n")
    assert parser.get_commands() == []


def test_query_buffer_limit():
    parser = RequestParser(query_buffer_limit=1000)
    parser.feed(b"*2\r\n$4\r\nECHO\r\n$2000\r\n" + b"x" * 900)
    assert parser.get_commands() == []
    with pytest.raises(QueryBufferLimitError):
        parser.feed(b"x" * 200)
    with pytest.raises(QueryBufferLimitError):
        parser.get_commands()
    # bytes queued by MULTI count too
    parser = RequestParser(query_buffer_limit=1000)
    parser.feed(b"x" * 500, 500)
    with pytest.raises(QueryBufferLimitError):
        RequestParser(query_buffer_limit=1000).feed(b"x" * 500, 501)
    # consumed commands free their share
    parser = RequestParser(query_buffer_limit=1000)
    for _ in range(10):
        parser.feed(b"PING\r\n" * 150)
        assert len(parser.get_commands()) == 150


def test_query_buffer_limit_for_big_bulk_matches_redis(redis_port):
    raw = RawClient(redis_port)
    assert raw.call(b"CONFIG", b"SET", b"client-query-buffer-limit", b"1mb") == b"+OK\r\n"
    try:
        limit = 1 << 20
        for size in (900_000, 1_100_000):
            data = pack([b"ECHO", b"x" * size])
            ours = _fake_server(data, query_buffer_limit=limit)
            assert exchange(redis_port, data) == ours
            assert ours == (_bulk(b"x" * size) if size < limit else b"")
    finally:
        raw.call(b"CONFIG", b"SET", b"client-query-buffer-limit", b"1gb")
        raw.close()


def test_unauthenticated_query_buffer_limit_is_1mb():
    parser = RequestParser(authenticated=False)
    parser.feed(b"x" * (1 << 20))
    with pytest.raises(QueryBufferLimitError):
        parser.feed(b"x")
    parser = RequestParser(authenticated=True)
    parser.feed(b"*1\r\n$1048577\r\n" + b"x" * (1 << 20))
    parser.feed(b"x")


def test_authenticated_flag_applies_to_the_next_command():
    parser = RequestParser(authenticated=False)
    parser.feed(AUTH + pack([b"ECHO", b"e" * 20000]) + pack([b"PING"] * 1))
    assert parser.get_commands() == [[b"AUTH", PASSWORD]]  # one at a time before AUTH
    parser.authenticated = True
    assert parser.get_commands() == [[b"ECHO", b"e" * 20000], [b"PING"]]


def test_buffer_is_released_after_a_big_pipeline():
    parser = RequestParser()
    parser.feed(b"PING\r\n" * 500_000)
    assert parser.capacity >= 3_000_000
    assert len(parser.get_commands()) == 500_000
    assert parser.capacity == 0 and parser.pending == 0


def test_partial_command_is_safe_to_introspect():
    import gc

    parser = RequestParser()
    parser.feed(b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n")
    assert parser.get_commands() == []
    partial = [o for o in gc.get_referents(parser) if isinstance(o, list)]
    assert partial == [[b"XADD", b"s", None, None, None]]
    parser.feed(b"$1\r\n*\r\n$1\r\nf\r\n$1\r\nv\r\n")
    assert parser.get_commands() == [[b"XADD", b"s", b"*", b"f", b"v"]]
