"""Many small collections, so that their keys are packed and unpacked again between
commands (engine/core/packed.pyx), answered as redis-server 7.0 answers: every read and
change of a packed key, its TTL, COPY, RENAME and the encodings both report alike
(hashes and sorted sets; 7.0 has no listpack sets and always calls a list a quicklist)."""
from __future__ import annotations

import random

import pytest

from differential import RedisOracle, run_both
from servers import needs_redis

pytestmark = needs_redis
KEYS = 120              # per type: well over the loose keys that make a database settle
FIELDS = [f"f{i}" for i in range(12)]
MEMBERS = [str(i) for i in range(-3, 9)] + ["a", "bb", "member:ccc"]


def _command(rng: random.Random) -> tuple:
    k = rng.randrange(KEYS)
    h, lst, s, z = f"h:{k}", f"l:{k}", f"s:{k}", f"z:{k}"
    f, m, n = rng.choice(FIELDS), rng.choice(MEMBERS), rng.randint(-5, 20)
    kind = rng.choice("hlsz")          # COPY and RENAME keep each name to one type
    any_key, other = f"{kind}:{k}", f"{kind}:{rng.randrange(KEYS)}"
    return rng.choice([
        ("HSET", h, f, m, rng.choice(FIELDS), n), ("HDEL", h, f), ("HGET", h, f),
        ("HGETALL", h), ("HLEN", h), ("HINCRBY", h, f, n), ("HKEYS", h), ("HSTRLEN", h, f),
        ("RPUSH", lst, m, n), ("LPUSH", lst, m), ("LPOP", lst), ("RPOP", lst, 2),
        ("LRANGE", lst, 0, -1), ("LINDEX", lst, n), ("LSET", lst, n, m), ("LREM", lst, 0, m),
        ("LINSERT", lst, "BEFORE", m, "x"), ("LTRIM", lst, 0, 7), ("LLEN", lst),
        ("SADD", s, m, n), ("SADD", s, n), ("SREM", s, m), ("SMEMBERS", s),
        ("SISMEMBER", s, m), ("SCARD", s), ("SPOP", s, 0),
        ("ZADD", z, n, m), ("ZINCRBY", z, n, m), ("ZREM", z, m), ("ZSCORE", z, m),
        ("ZRANGE", z, 0, -1, "WITHSCORES"), ("ZRANK", z, m), ("ZCARD", z), ("ZPOPMIN", z),
        ("OBJECT", "ENCODING", rng.choice([h, z])), ("TYPE", any_key),
        ("EXPIRE", any_key, 1000), ("TTL", any_key), ("DEL", any_key),
        ("COPY", any_key, f"copy:{any_key}", "REPLACE"), ("RENAME", f"copy:{any_key}", other),
    ])


@pytest.mark.parametrize("seed", range(3))
def test_packed_keys_answer_as_redis(seed: int, engine, oracle: RedisOracle) -> None:  # noqa: ANN001
    rng = random.Random(seed)
    fill = [cmd for k in range(KEYS) for cmd in (
        ("HSET", f"h:{k}", "f0", k, "f1", "v"), ("RPUSH", f"l:{k}", k, "a", "b"),
        ("SADD", f"s:{k}", k, k + 1), ("SADD", f"s:{k + KEYS}", "a", k),
        ("ZADD", f"z:{k}", k, "m", 1, "n"))]
    run_both(engine, oracle, fill + [_command(rng) for _ in range(4000)], label=f"seed={seed}")
