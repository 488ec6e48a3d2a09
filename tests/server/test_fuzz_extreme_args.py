"""Fuzzer: commands with extreme integers and counts in every numeric argument position
of every command family, against a real sluice-server with `--appendonly yes
--appendfsync always`, replies compared with redis-server's (tests/differential.py's
rules and deliberate differences). Commands whose reply is random (SRANDMEMBER,
SPOP, ...) run on Sluice alone, on keys no compared command reads.

Afterwards: PING answers within 1 s, the log holds no traceback, BGREWRITEAOF
succeeds, and after kill -9 and a restart the keyspace (every key's DUMP, a stream's
full XINFO, and expiry time, in every database) equals the one before.

Bounded for CI (about 40 s); SLUICE_FUZZ_SCALE=10 runs ten times longer.
"""
from __future__ import annotations

import os
import random
import signal
import time

import pytest
import redis

from differential import BELOW_MAX_STREAM_ID, RedisOracle, excluded_difference, run_both
from servers import SluiceServer

SCALE = float(os.environ.get("SLUICE_FUZZ_SCALE", "1"))
BUDGET_S = 40 * SCALE
DURABLE = ["--appendonly", "yes", "--appendfsync", "always"]
# Strings above 1 MB are refused on both sides: SETRANGE 536870911 would allocate.
SMALL_STRINGS = ("CONFIG", "SET", "proto-max-bulk-len", "1mb")

EXTREME = ("0", "-1", "1", "2147483647", "2147483648", "4294967296", "9007199254740992",
           "9223372036854775807", "9223372036854775808", "18446744073709551615",
           "18446744073709551616", "-9223372036854775808", "-9223372036854775809",
           "-2147483648", "123456789012345678901234567890", "-123456789012345678901234567890",
           "inf", "-inf", "+inf", "nan", "-0", "", "1e308", "1e400", "0x10", " 1", "1.5",
           "3", "10", "-3", "(1", "(-1", "-", "+")

# Where a small positive number is a time that decides the reply (min-idle in ms), a
# compared run would race the clock: {i} takes EXTREME without those.
IDLE = tuple(n for n in EXTREME if n not in ("1", "3", "10", "1.5", "0x10", " 1"))

# XAUTOCLAIM's COUNT: 7.0 allocates COUNT * 16 bytes up front and answers "Insufficient
# memory ... COUNT too high" when its allocator refuses (2^53 here; 2^32 it grants):
# an answer of the machine, not of the command. Sluice sizes nothing by COUNT.
AUTOCLAIM_COUNT = tuple(n for n in EXTREME if n != "9007199254740992")

# XSETID's ENTRIESADDED: at 2^63-1 the next XADD overflows the counter (7.0 wraps it to
# -2^63; Sluice's reply differs and whether it may be stored at all is for the
# persistence of counters at their limits): left out until that is settled.
ENTRIES_ADDED = tuple(n for n in EXTREME if n != "9223372036854775807")

# The placeholders of the templates below and the values they take.
SLOTS = {"{n}": EXTREME, "{i}": IDLE, "{c}": AUTOCLAIM_COUNT, "{e}": ENTRIES_ADDED}

# Compared commands read and write only these keys.
COMPARED = (
    "XREADGROUP GROUP g c2 COUNT {n} STREAMS s {n}", "XREADGROUP GROUP g c2 COUNT {n} STREAMS s >",
    "XREAD COUNT {n} STREAMS s {n}", "XRANGE s {n} {n} COUNT {n}", "XREVRANGE s {n} {n} COUNT {n}",
    "XRANGE s {n}-{n} + COUNT {n}", "XRANGE s ({n}-{n} ({n}",
    "XAUTOCLAIM s g c3 {i} {n} COUNT {c}", "XAUTOCLAIM s g c3 0 {n}-{n} COUNT {c} JUSTID",
    "XPENDING s g {n} {n} {n}", "XPENDING s g - + {n} c1",
    "XCLAIM s g c4 {i} 1-1 2-1", "XCLAIM s g c4 0 1-1 IDLE {n} RETRYCOUNT {n} JUSTID",
    "XCLAIM s g c4 0 2-1 TIME {n} FORCE",
    "XADD s {n}-{n} f v", "XADD s {n} f v", "XADD s MAXLEN {n} {n}-1 f v",
    "XADD s MAXLEN ~ {n} LIMIT {n} {n}-5 f v", "XADD s MINID {n} {n}-2 f v", "XADD s NOMKSTREAM {n}-{n} f v",
    "XTRIM s MINID {n}", "XTRIM s MINID {n}-{n}", "XTRIM s MAXLEN {n}", "XTRIM s MAXLEN ~ {n} LIMIT {n}",
    "XSETID s {n}-{n}", "XSETID s {n} ENTRIESADDED {e} MAXDELETEDID {n}-{n}",
    "XGROUP CREATE s g{n} {n} ENTRIESREAD {n}", "XGROUP SETID s g {n} ENTRIESREAD {n}",
    "XGROUP CREATECONSUMER s g c{n}", "XACK s g {n}-{n} {n}", "XDEL s {n}-{n}", "XLEN s",
    "XINFO STREAM s FULL COUNT {n}", "XINFO GROUPS s",
    "LRANGE l {n} {n}", "LINDEX l {n}", "LSET l {n} x", "LTRIM l {n} {n}", "LINSERT l BEFORE {n} x",
    "LPOS l a RANK {n} COUNT {n} MAXLEN {n}", "LPOP l {n}", "RPOP l {n}", "LMPOP {n} l LEFT",
    "LMPOP 1 l RIGHT COUNT {n}", "LREM l {n} a", "RPUSH l {n} a",
    "ZADD z {n} a {n} b", "ZADD z INCR {n} c", "ZADD z GT CH {n} a", "ZINCRBY z {n} a",
    "ZRANGE z {n} {n}", "ZRANGE z {n} {n} BYSCORE LIMIT {n} {n}", "ZRANGE z {n} {n} REV WITHSCORES",
    "ZRANGEBYSCORE z {n} {n} LIMIT {n} {n}", "ZREVRANGEBYSCORE z {n} {n} WITHSCORES",
    "ZRANGEBYLEX z - + LIMIT {n} {n}", "ZCOUNT z {n} {n}", "ZREMRANGEBYSCORE z {n} {n}",
    "ZREMRANGEBYRANK z {n} {n}", "ZPOPMIN z {n}", "ZPOPMAX z {n}", "ZMPOP 1 z MAX COUNT {n}",
    "ZRANGESTORE zd z {n} {n}", "ZUNIONSTORE zd {n} z", "ZINTER {n} z", "ZUNION 1 z WEIGHTS {n}",
    "ZINTERCARD 1 z LIMIT {n}", "ZSCORE z a", "ZMSCORE z a b",
    "HSET h a {n} b {n}", "HINCRBY h a {n}", "HINCRBYFLOAT h b {n}", "HGETALL h",
    "SADD st {n} a", "SINTERCARD {n} st", "SINTERCARD 1 st LIMIT {n}", "SMEMBERS st",
    "SET str {n}", "GETRANGE str {n} {n}", "SUBSTR str {n} {n}", "SETRANGE str {n} xy",
    "APPEND str {n}", "STRLEN str", "GET str", "LCS str str2 IDX MINMATCHLEN {n} WITHMATCHLEN",
    "INCRBY i {n}", "DECRBY i {n}", "INCR i", "INCRBYFLOAT f {n}", "GET i", "GET f", "SET i {n}",
    "SETNX sn {n}", "GETSET gs {n}", "MSET m1 {n} m2 {n}",
    "SORT l LIMIT {n} {n} ALPHA", "SORT l LIMIT {n} {n}", "SORT st ALPHA LIMIT {n} {n} STORE sd",
    "SET tk v EX {n}", "SET tk v PX {n}", "SET tk v EXAT {n}", "SET tk v PXAT {n}",
    "SETEX tk {n} v", "PSETEX tk {n} v", "GETEX tk EX {n}", "GETEX tk PXAT {n}",
    "EXPIRE tk {n}", "PEXPIRE tk {n} NX", "EXPIREAT tk {n}", "PEXPIREAT tk {n} GT",
    "COPY str cp DB {n}", "MOVE cp {n}", "RESTORE rk {n} x", "OBJECT FREQ str", "TYPE {n}",
    "EXISTS {n}", "DEL {n}", "RENAME {n} {n}",
)
# Random replies: Sluice alone, on keys no compared command reads.
ALONE = (
    "SRANDMEMBER rs {n}", "SPOP rs {n}", "HRANDFIELD rh {n}", "HRANDFIELD rh {n} WITHVALUES",
    "ZRANDMEMBER rz {n}", "ZRANDMEMBER rz {n} WITHSCORES", "SCAN {n} COUNT {n}",
    "RANDOMKEY", "SCAN 0 COUNT {n} TYPE string",
    # Small collections scan whole in a listpack; 7.0 keeps these sets, and hashes once
    # a long value came, in a hash table (never converted back):
    "SSCAN st {n} COUNT {n}", "HSCAN h {n} COUNT {n}", "ZSCAN z {n} COUNT {n}",
)
# Run (uncompared: whether tk expired meanwhile is the clock's) before the commands
# that start with the key: a compared TTL command always finds tk as it expects.
BEFORE = {"EXPIRE": ("SET", "tk", "v"), "PEXPIRE": ("SET", "tk", "v"),
          "EXPIREAT": ("SET", "tk", "v"), "PEXPIREAT": ("SET", "tk", "v"),
          "GETEX": ("SET", "tk", "v"), "SET tk": ("DEL", "tk")}
REFILL = [
    ("RPUSH", "l", "a", "b", "c", "d", "a"), ("ZADD", "z", "1", "a", "2", "b", "3", "c"),
    ("HSET", "h", "a", "1", "b", "2.5"), ("SADD", "st", "a", "b", "c"),
    ("SETNX", "str", "hello world"), ("SET", "str2", "hello there"),
    ("XADD", "s", "1-1", "f", "v"), ("XADD", "s", "2-1", "f", "v"), ("XADD", "s", "3-1", "f", "v"),
    ("XGROUP", "CREATE", "s", "g", "0"), ("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"),
]
ALONE_REFILL = [("SADD", "rs", "a", "b", "c", "d"), ("HSET", "rh", "a", "1", "b", "2"),
                ("ZADD", "rz", "1", "a", "2", "b")]


# The largest stream ID is 7.0's internal spelling of ">": a group positioned there
# re-delivers it on every XREADGROUP ... > (see differential.BELOW_MAX_STREAM_ID).
MAX_ID = "18446744073709551615-18446744073709551615"
MAX_ID_BELOW = BELOW_MAX_STREAM_ID


def instantiate(rng: random.Random, template: str) -> tuple:
    words = []
    for word in template.split(" "):
        for slot, pool in SLOTS.items():
            while slot in word:
                word = word.replace(slot, rng.choice(pool), 1)
        words.append(MAX_ID_BELOW if word == MAX_ID else word)
    return tuple(words)


def commands(rng: random.Random):
    """An endless stream of (how, command): how is "compared", "alone" (Sluice) or
    "both" (run on both, replies not compared)."""
    while True:
        for cmd in REFILL:
            yield "compared", cmd
        for cmd in ALONE_REFILL:
            yield "alone", cmd
        for _ in range(60):
            if rng.random() < 0.1:
                yield "alone", instantiate(rng, rng.choice(ALONE))
                continue
            template = rng.choice(COMPARED)
            for prefix, before in BEFORE.items():
                if template.startswith(prefix):
                    yield "both", before
            cmd = instantiate(rng, template)
            if excluded_difference(cmd) is None:
                yield "compared", cmd


def read_out(client: redis.Redis) -> dict:
    """(db, key) -> (the value, its expiry time) for every key that will not expire in
    the next two minutes. The value is its DUMP, but a set's or hash's is its sorted
    members, and a stream's is what XINFO STREAM FULL says of it (every
    entry, group, consumer and pending entry, with absolute times) without
    radix-tree-keys/-nodes: where its nodes split is not its content
    (and a reload may place them anew)."""
    horizon = int(time.time() * 1000) + 120_000
    out = {}
    for db in range(16):
        client.execute_command("SELECT", db)
        for key in client.keys("*"):
            at = client.execute_command("PEXPIRETIME", key)
            if 0 <= at < horizon:
                continue
            kind = client.type(key)
            if kind == b"stream":
                shown = client.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", 0)
                value = {k: v for k, v in shown.items() if not k.startswith(b"radix-tree")}
            elif kind in (b"set", b"hash"):
                # A hash table's DUMP lists members in its order, which a reload may
                # change, and a small one reloads as a listpack (as in Redis).
                members = client.smembers(key) if kind == b"set" else client.hgetall(key).items()
                value = sorted(members)
            else:
                value = client.dump(key)
            out[db, key] = (value, at)
    client.execute_command("SELECT", 0)
    return out


def wait_rewrite(client: redis.Redis) -> dict:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        info = client.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            return info
        time.sleep(0.05)
    raise AssertionError("BGREWRITEAOF did not finish in 60 s")


def assert_clean_log(srv: SluiceServer) -> None:
    log = srv.log_text()
    bad = [line for line in log.splitlines() if "Traceback" in line or "internal error" in line]
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("seed", [0, 1])
def test_extreme_arguments(seed, oracle, redis_server, tmp_path) -> None:
    oracle_address = redis_server
    rng = random.Random(seed)
    oracle.execute(*SMALL_STRINGS)
    with SluiceServer(DURABLE, workdir=tmp_path) as srv:
        compared = RedisOracle("127.0.0.1", srv.port, socket_timeout=30)
        alone = redis.Redis(port=srv.port, socket_timeout=30)
        oracle_alone = redis.Redis(*oracle_address, socket_timeout=30)
        compared.execute(*SMALL_STRINGS)
        ran = [0]
        deadline = time.monotonic() + BUDGET_S / 2      # two seeds share the budget

        def until_deadline():
            """The compared commands (one run_both: its lag tracking spans the run); the
            others run on Sluice alone as they come."""
            for how, cmd in commands(rng):
                if time.monotonic() > deadline:
                    return
                if how == "compared":
                    ran[0] += 1
                    yield cmd
                    continue
                for side in (alone, oracle_alone) if how == "both" else (alone,):
                    try:
                        side.execute_command(*cmd)
                    except redis.ResponseError:
                        pass

        try:
            run_both(compared, oracle, until_deadline(), label=f"fuzz seed={seed}")
            t0 = time.monotonic()
            assert alone.ping()
            assert time.monotonic() - t0 < 1.0, "PING took over 1 s after the run"
            assert_clean_log(srv)
            alone.bgrewriteaof()
            assert wait_rewrite(alone)["aof_last_bgrewrite_status"] == "ok"
            before = read_out(alone)
        finally:
            compared.close()
            alone.close()
            oracle_alone.close()
            oracle.execute("CONFIG", "SET", "proto-max-bulk-len", "512mb")
        srv.stop(signal.SIGKILL)
        srv.start()
        with redis.Redis(port=srv.port, socket_timeout=30) as client:
            after = read_out(client)
        assert_clean_log(srv)
    assert after.keys() == before.keys()
    changed = [k for k in before if before[k] != after[k]]
    assert not changed, (f"{len(changed)} keys differ after the restart, e.g. {changed[:5]}; "
                         f"the first before: {before[changed[0]]}\nafter: {after[changed[0]]}")
    print(f"seed {seed}: {ran[0]} compared commands, {len(before)} keys compared after restart")
