"""The RESP types of the collection commands' replies, byte for byte as redis-server
7.0 sends them, in RESP2 and RESP3: maps (HGETALL), sets (SMEMBERS, SINTER, SPOP with
a count), nested pairs (HRANDFIELD ... WITHVALUES in RESP3), null arrays (LPOP with a
count, LMPOP, BLPOP's timeout) and null bulks (BLMOVE's timeout inside MULTI)."""
from __future__ import annotations

import pytest

from raw_io import raw_socket, read_reply
from servers import SluiceServer

# One member or field per collection: the bytes do not depend on set/hash order.
SETUP = [["SADD", "s", "a"], ["HSET", "h", "f", "1"], ["RPUSH", "l", "x"]]
PROBES = [
    ["SMEMBERS", "s"], ["SINTER", "s", "s"], ["SUNION", "s", "nokey"], ["SDIFF", "s", "nokey"],
    ["SRANDMEMBER", "s", "5"], ["SMISMEMBER", "s", "a", "b"], ["SSCAN", "s", "0"],
    ["SPOP", "nokey", "2"], ["SPOP", "nokey"],
    ["HGETALL", "h"], ["HGETALL", "nokey"], ["HRANDFIELD", "h", "1", "WITHVALUES"],
    ["HRANDFIELD", "nokey"], ["HRANDFIELD", "nokey", "2"], ["HMGET", "h", "f", "g"],
    ["HSCAN", "h", "0"], ["HINCRBYFLOAT", "h", "n", "1.5"],
    ["LPOP", "nokey", "1"], ["LPOP", "nokey"], ["LMPOP", "1", "nokey", "LEFT"],
    ["LPOS", "l", "x", "COUNT", "0"], ["LPOS", "l", "y"], ["LRANGE", "nokey", "0", "-1"],
    ["BLPOP", "nokey", "0.01"], ["BLMOVE", "nokey", "d", "LEFT", "LEFT", "0.01"],
    ["BLMPOP", "0.01", "1", "nokey", "LEFT"],
    ["MULTI"], ["BLMOVE", "nokey", "d", "LEFT", "LEFT", "0"], ["BLPOP", "nokey", "0"], ["EXEC"],
    ["SPOP", "s", "5"],
]


def encode(cmd: list) -> bytes:
    return b"*%d\r\n" % len(cmd) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in cmd)


def replies(port: int, protocol: int) -> list:
    s = raw_socket(port)
    try:
        for cmd in [["HELLO", str(protocol)], ["FLUSHALL"], *SETUP]:
            s.sendall(encode(cmd))
            read_reply(s)
        out = []
        for cmd in PROBES:
            s.sendall(encode(cmd))
            out.append(read_reply(s))
        return out
    finally:
        s.close()


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


@pytest.mark.parametrize("protocol", [2, 3])
def test_reply_bytes_match_redis(sluice, redis_server, protocol):
    ours = replies(sluice.port, protocol)
    theirs = replies(redis_server[1], protocol)
    for cmd, a, b in zip(PROBES, ours, theirs):
        assert a == b, f"{cmd}: {a!r} != {b!r}"
