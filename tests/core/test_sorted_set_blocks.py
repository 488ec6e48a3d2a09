"""The sorted-set value (engine/core/sorted_set.pyx) against a Python model: random
adds, score changes, deletes, pops and rank trims on both encodings, checking scores,
ranks, rank and score windows after each step, and the skiplist's structure (links in
order, spans, backward links, tail, length, the hash table pointing at each node)
through tests/native/collection_blocks_probe.pyx; conversions at the EncodingLimits;
the memory it holds counted and given back."""
import gc
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.encoding_limits import EncodingLimits
from engine.core.memory import used_bytes
from engine.core.sorted_set import SortedSetValue, format_score
from native.collection_blocks_probe import skiplist_check

MEMBER = st.one_of(st.sampled_from([b"", b"a", b"b", b"ab", b"1", b"-2", b"10", b"x" * 70]),
                   st.binary(max_size=12))
SCORE = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 1.5, 2.0, math.inf, -math.inf,
                                   1e300, 5e-324, 0.1, 2.0 ** 53 + 2]),
                  st.integers(-3, 3).map(float),
                  st.floats(allow_nan=False))
OPS = st.lists(st.tuples(st.sampled_from("aaaadptr"), MEMBER, SCORE, st.integers(0, 300)),
               max_size=150)


def model_order(model: dict) -> list:
    return sorted((score, member) for member, score in model.items())


def check(value: SortedSetValue, model: dict) -> None:
    order = model_order(model)
    assert len(value) == len(order)
    assert list(value) == order
    if value.big:
        assert skiplist_check(value) == order
    for rank, (score, member) in enumerate(order):
        assert value.rank(member) == rank
        assert value.score(member) == score
        assert value.at(rank) == (score, member)
    assert value.nbytes == sum(len(m) for m in model)
    n = len(order)
    for start, stop in ((0, n), (1, n - 1), (n // 2, n), (0, 3)):
        assert value.pairs(start, stop) == order[max(start, 0):stop]
        assert value.pairs(start, stop, True) == order[max(start, 0):stop][::-1]
    for low, high in ((-1.0, 1.0), (0.0, 0.0), (-math.inf, math.inf), (1.5, -1.0)):
        for low_ex in (False, True):
            for high_ex in (False, True):
                start, stop = value.score_bounds(low, low_ex, high, high_ex)
                inside = [i for i, (s, _) in enumerate(order)
                          if (s > low if low_ex else s >= low)
                          and (s < high if high_ex else s <= high)]
                assert (start, stop) == ((inside[0], inside[-1] + 1) if inside
                                         else (start, start))


def run(ops, value: SortedSetValue, limits: EncodingLimits) -> None:
    model: dict = {}
    for op, member, score, n in ops:
        if op == "a":
            new = value.add(member, score, limits)
            assert new == (member not in model)
            old = model.get(member)
            if old is None or old != score:
                # a listpack keeps no -0; equal scores (0 and -0) leave the old one
                model[member] = score + 0.0 if not value.big and score == 0 else score
        elif op == "d":
            assert value.discard(member) == (member in model)
            model.pop(member, None)
        elif op == "p" and model:
            order = model_order(model)
            score0, member0 = order[-1] if n % 2 else order[0]
            assert value.pop(bool(n % 2)) == (member0, score0)
            del model[member0]
        elif op == "r" and model:
            order = model_order(model)
            start = n % len(order)
            stop = min(len(order), start + 1 + n % 7)
            for _, m in order[start:stop]:
                del model[m]
            trim(value, start, stop)
        check(value, model)
        if op == "t":
            copy = value.copy()
            check(copy, model)
            assert copy.encoding() == value.encoding()


def trim(value: SortedSetValue, start: int, stop: int) -> None:
    """Removes ranks [start, stop) as ZREMRANGEBYRANK does, by members."""
    for _, member in value.pairs(start, stop):
        value.discard(member)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_skiplist_matches_a_model(ops):
    limits = EncodingLimits()
    value = SortedSetValue(1000, 0, limits)
    assert value.encoding() == b"skiplist"
    run(ops, value, limits)


@settings(max_examples=150, deadline=None)
@given(OPS, st.integers(1, 12))
def test_listpack_converts_as_a_model(ops, entries):
    limits = EncodingLimits()
    limits.zset_max_listpack_entries = entries
    limits.zset_max_listpack_value = 16
    value = SortedSetValue(0, 0, limits)
    assert value.encoding() == b"listpack"
    run(ops, value, limits)


def test_big_skiplist_ranks_and_windows():
    value = SortedSetValue(0, 0)
    for i in range(5000):
        value.add(b"m%05d" % i, float((i * 7919) % 5000) / 3)
    order = sorted(value)
    assert value.encoding() == b"skiplist"
    assert skiplist_check(value) == order
    for rank in range(0, 5000, 97):
        assert value.rank(order[rank][1]) == rank
        assert value.at(rank) == order[rank]
    for i in range(0, 5000, 2):
        value.discard(b"m%05d" % i)
    assert skiplist_check(value) == sorted(value) and len(value) == 2500


def test_conversion_and_negative_zero():
    limits = EncodingLimits()
    limits.zset_max_listpack_entries = 3
    limits.zset_max_listpack_value = 4
    value = SortedSetValue(0, 0, limits)
    value.add(b"z", -0.0, limits)
    assert math.copysign(1, value.score(b"z")) == 1          # a listpack keeps no -0
    for m in (b"a", b"b"):
        value.add(m, 1.0, limits)
    assert value.encoding() == b"listpack"
    value.add(b"a", 2.0, limits)                               # an update never converts
    assert value.encoding() == b"listpack"
    value.add(b"c", 3.0, limits)
    assert value.encoding() == b"skiplist"
    value.discard(b"c")
    value.discard(b"b")
    assert value.encoding() == b"skiplist"                     # one way
    value.add(b"w", -0.0, limits)
    assert math.copysign(1, value.score(b"w")) == -1
    value.add(b"w", 0.0, limits)                               # equal: the old one stays
    assert math.copysign(1, value.score(b"w")) == -1
    long = SortedSetValue(0, 0, limits)
    long.add(b"12345", 1.0, limits)
    assert long.encoding() == b"skiplist"
    assert SortedSetValue(4, 0, limits).encoding() == b"skiplist"
    assert SortedSetValue(3, 5, limits).encoding() == b"skiplist"
    limits.zset_max_listpack_entries = 0
    assert SortedSetValue(0, 0, limits).encoding() == b"skiplist"


@pytest.mark.parametrize("size", [10, 500])
def test_records_round_trip(size):
    value = SortedSetValue(0, 0)
    for i in range(size):
        value.add(b"m%d" % i, (-1) ** i * i / 7 if i % 5 else math.inf * (-1) ** i)
    again = SortedSetValue.from_record(value.to_record())
    assert list(again) == list(value) and again.encoding() == value.encoding()
    assert format_score(0.1) == b"0.1" and format_score(-math.inf) == b"-inf"


def test_memory_is_counted_and_given_back():
    gc.collect()
    before = used_bytes()
    values = [SortedSetValue(0, 0) for _ in range(3)]
    for v, n in zip(values, (5, 300, 3000)):
        for i in range(n):
            v.add(b"member:%d" % i, float(i))
    held = used_bytes() - before
    assert held >= sum(v.memory_bytes() for v in values) > 3000 * 40
    del values, v
    gc.collect()
    assert used_bytes() == before
