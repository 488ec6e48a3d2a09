"""Counts and numbers at their limits against a real sluice-server: a COUNT of 2^60 must
be clamped to what exists before anything is sized by it (the PEL, the stream), and
every reply the oracle can give must be redis-server's (tests/differential.py's rules).
"""
from __future__ import annotations

import pytest
import redis

from differential import RedisOracle, excluded_difference, run_both
from servers import SluiceServer

DURABLE = ["--appendonly", "yes", "--appendfsync", "always"]

# 0, -1 and the edges of 32 and 64 bits, signed and unsigned, as a client may send them.
EXTREMES = ("0", "-1", "1", "2147483647", "2147483648", "4294967296", "4611686018427387904",
            "9223372036854775807", "9223372036854775808", "18446744073709551616",
            "-9223372036854775808", "-9223372036854775809", "576460752303423488",
            "1152921504606846976", "inf", "nan", "-0", "")


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer(DURABLE) as srv:
        yield srv


@pytest.fixture
def client(sluice):
    c = redis.Redis(port=sluice.port, socket_timeout=10)
    c.flushall()
    yield c
    c.close()


def pending_group(client: redis.Redis, entries: int) -> None:
    for i in range(entries):
        client.xadd("s", {"f": i}, id=f"{i + 1}-1")
    client.xgroup_create("s", "g", "0")
    client.execute_command("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")


@pytest.mark.parametrize("pending", [10, 100])
@pytest.mark.parametrize("count", [576460752303423488, 1152921504606846976,
                                   4611686018427387904, 9223372036854775807])
def test_claim_count_is_clamped_to_the_pel(client, sluice, pending, count) -> None:
    """CLAIM 0 with a COUNT of 2^59..2^63-1 claims the whole PEL, twice in a row (the
    second call reuses the heap the first one would have corrupted)."""
    pending_group(client, pending)
    for _ in range(2):
        reply = client.execute_command("XREADGROUP", "GROUP", "g", "c2", "COUNT", count,
                                       "CLAIM", 0, "STREAMS", "s", ">")
        assert [e[0] for e in reply[0][1]] == [f"{i + 1}-1".encode() for i in range(pending)]
    assert client.ping()
    assert "internal error" not in sluice.log_text() and "Traceback" not in sluice.log_text()


def filled(commands: list) -> list:
    """The fixture keys every sequence starts from, then `commands`."""
    return [("FLUSHALL",),
            ("RPUSH", "l", "a", "b", "c", "d"), ("ZADD", "z", 1, "a", 2, "b", 3, "c"),
            ("HSET", "h", "a", 1, "b", 2, "c", 3), ("SADD", "st", "a", "b", "c"),
            ("SET", "str", "hello world"),
            ("XADD", "s", "1-1", "f", "v"), ("XADD", "s", "2-1", "f", "v"),
            ("XADD", "s", "3-1", "f", "v"), ("XGROUP", "CREATE", "s", "g", "0"),
            ("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"), *commands]


# Every numeric argument position compared with the oracle at each extreme ({n}).
TEMPLATES = (
    "XREADGROUP GROUP g c2 COUNT {n} STREAMS s 0", "XREAD COUNT {n} STREAMS s 0",
    "XRANGE s - + COUNT {n}", "XREVRANGE s + - COUNT {n}",
    "XAUTOCLAIM s g c3 0 0 COUNT {n}", "XPENDING s g - + {n}", "XPENDING s g IDLE {n} - + 10",
    "XCLAIM s g c4 {n} 1-1", "XCLAIM s g c4 0 1-1 IDLE {n}", "XCLAIM s g c4 0 1-1 TIME {n}",
    "XCLAIM s g c4 0 1-1 RETRYCOUNT {n}",
    "LRANGE l 0 {n}", "LRANGE l {n} -1", "ZRANGE z 0 {n}", "ZRANGE z 0 -1 BYSCORE LIMIT 0 {n}",
    "ZRANGEBYSCORE z -inf +inf LIMIT {n} 1", "ZREVRANGEBYSCORE z +inf -inf LIMIT 0 {n}",
    "ZRANGEBYLEX z - + LIMIT 0 {n}", "SRANDMEMBER st {n}", "HRANDFIELD h {n}",
    "SPOP stx {n}", "LPOP lx {n}", "RPOP lx {n}", "HSCAN h 0 COUNT {n}", "ZSCAN z 0 COUNT {n}",
    "GETRANGE str 0 {n}", "GETRANGE str {n} -1", "SUBSTR str {n} {n}",
    "LPOS l a RANK {n}", "LPOS l a COUNT {n}", "LPOS l a MAXLEN {n}",
    "LINDEX l {n}", "LSET l {n} x", "LTRIM lt 0 {n}", "LINSERT l BEFORE {n} x", "SETRANGE sr {n} x",
    "EXPIRE str {n}", "PEXPIRE str {n}", "EXPIREAT str {n}", "PEXPIREAT str {n}",
    "SET sx v EX {n}", "SET sx v PX {n}", "SETEX sx {n} v", "PSETEX sx {n} v", "GETEX str EX {n}",
    "INCRBY i {n}", "DECRBY i {n}", "INCRBYFLOAT f {n}", "HINCRBY h a {n}", "HINCRBYFLOAT h a {n}",
    "ZINCRBY z {n} a", "ZADD z {n} q", "SORT l LIMIT 0 {n} ALPHA", "SORT l LIMIT {n} 1 ALPHA",
    "XADD s2 {n}-1 f v", "XADD s2 {n} f v", "XADD s2 MAXLEN {n} 1-1 f v", "XTRIM s MINID {n}",
    "XTRIM s MAXLEN {n}", "XSETID s {n}-0", "XSETID s 99-0 ENTRIESADDED {n} MAXDELETEDID 0-0",
    "XRANGE s {n} +", "XRANGE s ({n} +", "XRANGE s - ({n}", "ZRANGESTORE zd z 0 {n}",
    "ZREMRANGEBYRANK z 0 {n}", "ZPOPMIN z {n}", "ZMPOP 1 z MIN COUNT {n}",
    "LMPOP 1 l LEFT COUNT {n}", "SINTERCARD 1 st LIMIT {n}", "ZINTERCARD 1 z LIMIT {n}",
    "XGROUP CREATE s g2 0 ENTRIESREAD {n}", "XGROUP SETID s g 0 ENTRIESREAD {n}",
    "COPY str cp DB {n}", "MOVE str {n}", "SELECT {n}", "RESTORE rk {n} x",
    "LCS str str MINMATCHLEN {n}", "ZCOUNT z {n} +inf", "APPEND ap {n}",
)
RANDOM_REPLY = ("ZRANDMEMBER", "SRANDMEMBER", "HRANDFIELD", "SPOP")
CLOCK_REPLY = ("XPENDING s g IDLE", "XCLAIM s g c4 {n}")   # 1 ms idle: whether it passed
# depends on the clock


def instantiate(template: str, n: str) -> tuple:
    return tuple(n if word == "{n}" else word.replace("{n}", n) for word in template.split(" "))


@pytest.fixture
def over_socket(sluice):
    executor = RedisOracle("127.0.0.1", sluice.port, socket_timeout=10)
    yield executor
    executor.close()


@pytest.mark.parametrize("template", TEMPLATES)
def test_extreme_numbers_reply_as_redis(template, over_socket, oracle) -> None:
    commands = [instantiate(template, n) for n in EXTREMES
                if not (n == "1" and template.startswith(CLOCK_REPLY))]
    # Where 7.0 differs from the newest Redis by a listed difference, the oracle cannot say.
    commands = [c for c in commands if excluded_difference(c) is None]
    if template.startswith(RANDOM_REPLY):       # which members is random: compare sizes only
        commands = [c for c in commands if c[-1] in ("0", "") or not c[-1].lstrip("-").isdigit()
                    or int(c[-1]) >= 3]
    run_both(over_socket, oracle, [c for cmd in commands for c in filled([cmd])],
             label=template)


LIMITED = ("CONFIG", "SET", "proto-max-bulk-len", "1mb")
LIMIT_SEQUENCE = [
    LIMITED,
    ("SETRANGE", "k", 1048575, "x"), ("SETRANGE", "k", 1048576, "x"), ("STRLEN", "k"),
    ("APPEND", "k", "y"), ("APPEND", "k2", "y" * 1000), ("SETRANGE", "k2", 1048576 - 1000, "z"),
    ("SET", "a", "a" * 600), ("SET", "b", "ab" * 300),
    ("LCS", "a", "b", "LEN"),                       # 601 * 601 cells of 4 bytes: over 1 MB
    ("SET", "a", "a" * 510), ("LCS", "a", "b", "IDX"),
    ("SET", "a", "a" * 400), ("SET", "b", "ba" * 200), ("LCS", "a", "b", "LEN"),
    ("LCS", "a", "b", "IDX", "MINMATCHLEN", 2, "WITHMATCHLEN"),
    ("CONFIG", "SET", "proto-max-bulk-len", "512mb"), ("APPEND", "k", "y"),
]


def test_string_limits_follow_proto_max_bulk_len(oracle, tmp_path) -> None:
    """SETRANGE, APPEND and LCS's table against the configured proto-max-bulk-len,
    with redis-server's texts."""
    with SluiceServer(DURABLE, workdir=tmp_path) as srv:
        executor = RedisOracle("127.0.0.1", srv.port, socket_timeout=10)
        try:
            run_both(executor, oracle, [("FLUSHALL",), *LIMIT_SEQUENCE], label="limits")
        finally:
            executor.close()
            oracle.execute("CONFIG", "SET", "proto-max-bulk-len", "512mb")


def test_lcs_of_long_strings_is_refused_at_once(client) -> None:
    """Two 30,000-byte strings: a 3.6 GB table, over the default 512 MB limit."""
    client.set("a", b"ab" * 15_000)
    client.set("b", b"ba" * 15_000)
    with pytest.raises(redis.ResponseError, match="^Insufficient memory, transient memory "
                                                  "for LCS exceeds proto-max-bulk-len$"):
        client.execute_command("LCS", "a", "b")
    client.config_set("proto-max-bulk-len", "4gb")
    try:
        client.set("a", b"ab" * 1000)           # 8 MB: computed
        assert client.execute_command("LCS", "a", "b", "LEN") == 2000
    finally:
        client.config_set("proto-max-bulk-len", "512mb")


def test_xgroup_options_are_read_first(over_socket, oracle) -> None:
    """A bad ENTRIESREAD is reported before the ID, the key or the group (Redis reads
    CREATE's and SETID's options first)."""
    run_both(over_socket, oracle, [
        ("FLUSHALL",), ("XADD", "s", "1-1", "f", "v"), ("XGROUP", "CREATE", "s", "g", "0"),
        ("XGROUP", "SETID", "s", "g", "0x10", "ENTRIESREAD", "+"),
        ("XGROUP", "SETID", "s", "nog", "0x10", "ENTRIESREAD", "x"),
        ("XGROUP", "SETID", "nos", "g", "0", "ENTRIESREAD", "-5"),
        ("XGROUP", "SETID", "s", "g", "0x10", "ENTRIESREAD", "5"),
        ("XGROUP", "SETID", "s", "g", "0", "MKSTREAM"),
        ("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "1", "ENTRIESREAD", "2"),
        ("XGROUP", "CREATE", "s", "g2", "0x10", "ENTRIESREAD", "+"),
        ("XGROUP", "CREATE", "nos", "g3", "0x10", "ENTRIESREAD", "x"),
        ("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "1"), ("XINFO", "GROUPS", "s"),
    ], label="xgroup options")
