"""Seeded random command sequences over lists, hashes and sets, for differential tests
against the 7.0 oracle (tests/commands/test_lists.py, test_hashes.py, test_sets.py).

Why it looks the way it does:

* Everything comes from ``random.Random(seed)``: a seed reproduces its sequence.
* Few keys and few distinct elements (hashes and sets stay small: see LONG_ELEMENT), so commands meet existing keys, repeated
  elements, each other's types (WRONGTYPE) and collections they empty (removed keys).
* Only deterministic commands change state: SPOP takes a count beyond any set's size
  (all members, a known outcome); SRANDMEMBER and HRANDFIELD read only (their replies
  are compared by size, tests/differential.py _random_pick). Blocking commands are
  called on keys known to hold data or inside no client that may wait: the
  sequences run through Engine.execute, where a blocking command answers nil.
* A share of calls is invalid on purpose (bad numbers, unknown options, wrong arity).

`oracle_tests` makes the two differential tests each of those modules runs.
"""
from __future__ import annotations

import os
import random
from typing import Callable

import pytest

from differential import Command, run_both

# How many seeded sequences each test runs (more in a long run: SLUICE_DIFF_SEEDS=50).
SEEDS = range(int(os.environ.get("SLUICE_DIFF_SEEDS", "6")))

LIST_KEYS = ("l1", "l2", "l3")
HASH_KEYS = ("h1", "h2")
SET_KEYS = ("s1", "s2", "s3")
OTHER_KEYS = ("str", "nokey")
ELEMENTS = ("a", "b", "c", "1", "2", "-3", "10")
# A list element beyond listpack's 64 bytes. Hashes and sets stay small (listpack,
# intset), where Redis's HSCAN/SSCAN answer in one call as Sluice always does.
LONG_ELEMENT = "x" * 70
NUMBERS = ("0", "1", "2", "-1", "-2", "5", "-100", "100", "x", "1.5", "9223372036854775807",
           "-9223372036854775808", "")
FLOATS = ("0.1", "1", "-2.5", "1e3", "x", "inf", "3.0e-5", "")


class CollectionGenerator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, seq):
        return self.rng.choice(seq)

    def some(self, seq, lo: int = 1, hi: int = 4) -> list:
        return [self.pick(seq) for _ in range(self.rng.randint(lo, hi))]

    def key(self, family: tuple) -> str:
        r = self.rng.random()
        if r < 0.8:
            return self.pick(family)
        if r < 0.9:
            return self.pick(OTHER_KEYS)
        return self.pick(LIST_KEYS + HASH_KEYS + SET_KEYS)

    def number(self) -> str:
        return self.pick(NUMBERS) if self.rng.random() < 0.3 else str(self.rng.randint(-4, 6))

    # one command per family

    def list_command(self) -> Command:
        k, e, n = self.key(LIST_KEYS), self.pick(ELEMENTS + (LONG_ELEMENT,)), self.number
        end = lambda: self.pick(("LEFT", "RIGHT", "left", "middle"))  # noqa: E731
        choices = [
            lambda: ("LPUSH", k, *self.some(ELEMENTS)),
            lambda: ("RPUSH", k, *self.some(ELEMENTS)),
            lambda: ("LPUSHX", k, e),
            lambda: ("RPUSHX", k, e, e),
            lambda: ("LPOP", k),
            lambda: ("RPOP", k, n()),
            lambda: ("LRANGE", k, n(), n()),
            lambda: ("LLEN", k),
            lambda: ("LINDEX", k, n()),
            lambda: ("LSET", k, n(), e),
            lambda: ("LINSERT", k, self.pick(("BEFORE", "after", "x")), e, "new"),
            lambda: ("LREM", k, n(), e),
            lambda: ("LTRIM", k, n(), n()),
            lambda: ("LPOS", k, e, *self.lpos_options()),
            lambda: ("LMOVE", k, self.key(LIST_KEYS), end(), end()),
            lambda: ("RPOPLPUSH", k, self.key(LIST_KEYS)),
            lambda: ("LMPOP", self.pick(("1", "2", "0", "3")), k, self.key(LIST_KEYS), end(),
                     *self.pick(((), ("COUNT", n())))),
            lambda: ("BLPOP", k, self.key(LIST_KEYS), self.pick(("0.01", "x", "-1"))),
            lambda: ("BRPOP", k, "0.01"),
            lambda: ("BLMOVE", k, self.key(LIST_KEYS), end(), end(), "0.01"),
            lambda: ("BRPOPLPUSH", k, k, "0.01"),
            lambda: ("BLMPOP", "0.01", "1", k, end(), "COUNT", n()),
            lambda: ("LPOP", k, "1", "2"),
        ]
        return self.pick(choices)()

    def lpos_options(self) -> list:
        out = []
        for name in ("RANK", "COUNT", "MAXLEN", "FOO"):
            if self.rng.random() < 0.3:
                out += [name, self.number()]
        return out

    def hash_command(self) -> Command:
        k, f, n = self.key(HASH_KEYS), self.pick(ELEMENTS), self.number
        pairs = [x for _ in range(self.rng.randint(1, 3)) for x in (self.pick(ELEMENTS), self.pick(ELEMENTS))]
        choices = [
            lambda: ("HSET", k, *pairs),
            lambda: ("HSET", k, f),
            lambda: ("HMSET", k, *pairs),
            lambda: ("HSETNX", k, f, self.pick(ELEMENTS)),
            lambda: ("HGET", k, f),
            lambda: ("HMGET", k, *self.some(ELEMENTS)),
            lambda: ("HGETALL", k),
            lambda: ("HDEL", k, *self.some(ELEMENTS)),
            lambda: ("HINCRBY", k, f, n()),
            lambda: ("HINCRBYFLOAT", k, f, self.pick(FLOATS)),
            lambda: ("HEXISTS", k, f),
            lambda: ("HLEN", k),
            lambda: ("HKEYS", k),
            lambda: ("HVALS", k),
            lambda: ("HSTRLEN", k, f),
            lambda: ("HRANDFIELD", k, *self.pick(((), (n(),), (n(), "WITHVALUES"), (n(), "x")))),
            lambda: ("HSCAN", k, self.pick(("0", "x")), *self.scan_options()),
        ]
        return self.pick(choices)()

    def scan_options(self) -> list:
        return self.pick(([], ["MATCH", "*"], ["MATCH", "a*"], ["COUNT", self.number()],
                          ["FOO"]))

    def set_command(self) -> Command:
        k, m, n = self.key(SET_KEYS), self.pick(ELEMENTS), self.number
        keys = lambda: [self.key(SET_KEYS) for _ in range(self.rng.randint(1, 3))]  # noqa: E731
        choices = [
            lambda: ("SADD", k, *self.some(ELEMENTS)),
            lambda: ("SREM", k, *self.some(ELEMENTS)),
            lambda: ("SMEMBERS", k),
            lambda: ("SISMEMBER", k, m),
            lambda: ("SMISMEMBER", k, *self.some(ELEMENTS)),
            lambda: ("SCARD", k),
            lambda: ("SPOP", k, self.pick(("100", "0", "-1", "x"))),
            lambda: ("SRANDMEMBER", k, *self.pick(((), (n(),), (n(), "1")))),
            lambda: ("SMOVE", k, self.key(SET_KEYS), m),
            lambda: ("SINTER", *keys()),
            lambda: ("SUNION", *keys()),
            lambda: ("SDIFF", *keys()),
            lambda: ("SINTERSTORE", self.key(SET_KEYS), *keys()),
            lambda: ("SUNIONSTORE", self.key(SET_KEYS), *keys()),
            lambda: ("SDIFFSTORE", self.key(SET_KEYS), *keys()),
            lambda: ("SINTERCARD", self.pick(("1", "2", "0", "5")), *keys(),
                     *self.pick(((), ("LIMIT", n())))),
            lambda: ("SSCAN", k, self.pick(("0", "x")), *self.scan_options()),
        ]
        return self.pick(choices)()

    def generic_command(self) -> Command:
        k = self.key(LIST_KEYS + HASH_KEYS + SET_KEYS)
        return self.pick([
            lambda: ("TYPE", k),
            lambda: ("EXISTS", k),
            lambda: ("DEL", k),
            lambda: ("SET", "str", "v"),
            lambda: ("RENAME", k, self.key(LIST_KEYS + HASH_KEYS + SET_KEYS)),
        ])()


def generate(seed: int, length: int, families: tuple = ("list", "hash", "set")) -> list[Command]:
    """`length` commands mostly of `families`, some generic key commands mixed in."""
    gen = CollectionGenerator(seed)
    makers = [getattr(gen, f"{family}_command") for family in families]
    out = []
    for _ in range(length):
        make = gen.generic_command if gen.rng.random() < 0.05 else gen.pick(makers)
        out.append(tuple(str(a) for a in make()))
    return out


def oracle_tests(sequences: dict[str, list[Command]], family: str,
                 label: str) -> tuple[Callable, Callable]:
    """A family's test module's `test_handwritten_sequence` (each of `sequences`) and
    `test_random_sequence` (SEEDS sequences of `family`'s commands), both against
    the oracle, as a pair to assign to those names."""
    @pytest.mark.parametrize("name", sorted(sequences))
    def test_handwritten_sequence(name, engine, oracle):
        run_both(engine, oracle, sequences[name], label=name)

    @pytest.mark.parametrize("seed", SEEDS)
    def test_random_sequence(seed, engine, oracle):
        run_both(engine, oracle, generate(seed, 400, (family,)), label=f"{label} seed={seed}")

    return test_handwritten_sequence, test_random_sequence
