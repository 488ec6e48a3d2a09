"""The list value's quicklist (engine/core/list_value.pyx) against a Python list model:
node bounds under every kind of list-max-listpack-size, splits and merges in the
middle, LZF compression of interior nodes beyond list-compress-depth, and the
listpack <-> quicklist conversions of Redis 7.2's t_list.c."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.encoding_limits import EncodingLimits
from engine.core.list_value import ListValue
from engine.core.lzf import lzf_compress_bytes, lzf_decompress

REDIS_LP_EMPTY = 7            # bytes of an empty listpack as Redis counts them


def limits(fill: int = -2, depth: int = 0) -> EncodingLimits:
    out = EncodingLimits()
    out.list_max_listpack_size, out.list_compress_depth = fill, depth
    return out


def node_bound_holds(value: ListValue, fill: int) -> None:
    """Every node within its bound (a node of one entry may exceed it, as in Redis)."""
    shapes = value.node_shapes()
    assert sum(count for count, _, _ in shapes) == len(value)
    if value.encoding() == b"listpack":
        assert len(shapes) <= 1
        return
    for count, size, _ in shapes:
        assert count > 0
        if count == 1:
            continue
        if fill < 0:
            assert size <= 4096 << min(-fill - 1, 4)
        else:
            assert count <= max(fill, 1) and size <= 8192


def compression_holds(value: ListValue, depth: int) -> None:
    shapes = value.node_shapes()
    if depth == 0 or value.encoding() == b"listpack":
        assert not any(compressed for _, _, compressed in shapes)
        return
    for i, (_, _, compressed) in enumerate(shapes):
        if i < depth or i >= len(shapes) - depth:
            assert not compressed, (i, shapes)


# -- LZF -------------------------------------------------------------------------------------

@given(st.binary(max_size=3000), st.integers(0, 3))
@settings(max_examples=300, deadline=None)
def test_lzf_round_trip(data, repeat):
    data = data * (repeat + 1)
    packed = lzf_compress_bytes(data)
    if packed is not None:
        assert len(packed) < len(data)
        assert lzf_decompress(packed, len(data)) == data


def test_lzf_compresses_repetition_and_gives_up_on_noise():
    assert len(lzf_compress_bytes(b"abc" * 1000)) < 100
    assert lzf_compress_bytes(os.urandom(1000)) is None
    with pytest.raises(ValueError):
        lzf_decompress(b"\x05ab", 6)             # a literal run past the input's end


# -- node bounds, splits, compression ------------------------------------------------------

@pytest.mark.parametrize("fill", [-1, -2, -5, -6, 0, 1, 3, 100])
def test_pushes_fill_nodes_up_to_their_bound(fill):
    value = ListValue()
    lim = limits(fill)
    for i in range(3000):
        value.push([b"e%d" % i + b"x" * (i % 50)], left=i % 3 == 0, limits=lim)
    node_bound_holds(value, fill)
    assert value.encoding() == b"quicklist"
    if fill < 0:        # a full node is close to its bound: no node wasted
        sizes = [size for _, size, _ in value.node_shapes()[1:-1]]
        assert min(sizes) > (4096 << min(-fill - 1, 4)) - 70


def test_a_full_node_splits_in_the_middle_and_merges_back():
    lim = limits(3)
    value = ListValue([b"a", b"b", b"c", b"d", b"e", b"f"], lim)
    assert [c for c, _, _ in value.node_shapes()] == [3, 3]
    value.set(1, b"B", lim)                     # a replacement in place
    assert value.to_record() == [b"a", b"B", b"c", b"d", b"e", b"f"]
    assert value.insert(b"c", b"x", False, lim) == 7       # splits [a B | c] then fits
    assert value.to_record() == [b"a", b"B", b"x", b"c", b"d", b"e", b"f"]
    node_bound_holds(value, 3)
    assert [c for c, _, _ in value.node_shapes()] == [3, 1, 3]
    value.pop(5, True, lim)
    assert value.to_record() == [b"e", b"f"]
    assert value.encoding() == b"quicklist"     # one node, but more than half the bound
    value.pop(1, True, lim)
    assert value.encoding() == b"listpack"


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_interior_nodes_are_compressed_beyond_the_depth(depth):
    lim = limits(-1, depth)
    value = ListValue()
    for i in range(1000):
        value.push([b"item-%05d-" % i + b"z" * 200], left=False, limits=lim)
    shapes = value.node_shapes()
    assert len(shapes) > 2 * depth + 2
    compression_holds(value, depth)
    assert all(c for _, _, c in shapes[depth:-depth])      # repetitive data compresses
    assert value.memory_bytes() < sum(size for _, size, _ in shapes) / 4
    assert value.to_record()[100] == b"item-00100-" + b"z" * 200
    value.set(500, b"changed", lim)
    assert value.node_shapes()[len(shapes) // 2][2]         # compressed again after the change
    copy = value.copy()
    assert copy.to_record() == value.to_record()
    while len(value) > 1:
        value.pop(7, len(value) % 2 == 0, lim)
        compression_holds(value, depth)


def test_one_push_of_many_compresses_every_interior_node():
    value = ListValue([b"%05d" % i + b"z" * 100 for i in range(2000)], limits(4, 2))
    shapes = value.node_shapes()
    assert [c for _, _, c in shapes] == [False] * 2 + [True] * (len(shapes) - 4) + [False] * 2


def test_incompressible_nodes_stay_plain():
    lim = limits(-1, 1)
    value = ListValue([os.urandom(300) for _ in range(100)], lim)
    assert not any(c for _, _, c in value.node_shapes())


# -- against a model --------------------------------------------------------------------------

ELEMENTS = st.one_of(
    st.binary(max_size=12),
    st.integers(-2**63, 2**63 - 1).map(lambda i: b"%d" % i),
    st.integers(0, 3000).map(lambda n: b"L" * n),
)

OPS = st.one_of(
    st.tuples(st.just("push"), st.booleans(), st.lists(ELEMENTS, min_size=1, max_size=30)),
    st.tuples(st.just("pop"), st.booleans(), st.integers(1, 40)),
    st.tuples(st.just("set"), st.integers(-5000, 5000), ELEMENTS),
    st.tuples(st.just("insert"), st.booleans(), st.integers(0, 5000), ELEMENTS),
    st.tuples(st.just("remove"), st.integers(-3, 3), st.integers(0, 5000)),
    st.tuples(st.just("trim"), st.integers(0, 20), st.integers(0, 20)),
    st.tuples(st.just("range"), st.integers(0, 5000), st.integers(0, 5000)),
    st.tuples(st.just("positions"), st.integers(0, 5000), st.integers(-3, 3), st.integers(0, 3),
              st.integers(0, 50)),
)


def run(value: ListValue, model: list, op: tuple, lim: EncodingLimits) -> None:
    kind = op[0]
    if kind == "push":
        _, left, elements = op
        value.push(elements, left, lim)
        for e in elements:
            model.insert(0 if left else len(model), e)
    elif kind == "pop":
        _, left, count = op
        k = min(count, len(model))
        expect = model[:k] if left else model[::-1][:k]
        model[:] = model[k:] if left else model[:len(model) - k]
        assert value.pop(count, left, lim) == expect
    elif kind == "set" and model:
        _, index, element = op
        index %= len(model)
        value.set(index, element, lim)
        model[index] = element
    elif kind == "insert" and model:
        _, after, at, element = op
        pivot = model[at % len(model)]
        where = model.index(pivot)
        assert value.insert(pivot, element, after, lim) == len(model) + 1
        model.insert(where + 1 if after else where, element)
    elif kind == "remove" and model:
        _, count, at = op
        element = model[at % len(model)]
        indexes = [i for i, e in enumerate(model) if e == element]
        if count < 0:
            indexes = indexes[::-1]
        gone = set(indexes[:abs(count)] if count else indexes)
        assert value.remove(element, count, lim) == len(gone)
        model[:] = [e for i, e in enumerate(model) if i not in gone]
    elif kind == "trim":
        _, head, tail = op
        head, tail = min(head, len(model)), min(tail, len(model) - min(head, len(model)))
        value.trim(head, tail, lim)
        model[:] = model[head:len(model) - tail]
    elif kind == "range" and model:
        _, a, b = op
        a, b = sorted((a % len(model), b % len(model)))
        assert value.slice(a, b) == model[a:b + 1]
    elif kind == "positions" and model:
        _, at, rank, count, maxlen = op
        element, rank = model[at % len(model)], rank or 1
        order = list(range(len(model))) if rank > 0 else list(range(len(model)))[::-1]
        if maxlen:
            order = order[:maxlen]
        hits = [i for i in order if model[i] == element][abs(rank) - 1:]
        assert value.find(element, rank, count, maxlen) == (hits[:count] if count else hits)


@given(st.sampled_from([-1, -2, 0, 1, 4, 50]), st.integers(0, 2), st.lists(OPS, max_size=60))
@settings(max_examples=150, deadline=None)
def test_random_operations_match_a_python_list(fill, depth, ops):
    lim = limits(fill, depth)
    value, model = ListValue(), []
    for op in ops:
        run(value, model, op, lim)
        assert len(value) == len(model)
        assert value.nbytes == sum(map(len, model))
        node_bound_holds(value, fill)
        compression_holds(value, depth)
    assert value.to_record() == model
    assert ListValue.from_record(model).to_record() == model if model else True


# -- conversions (Redis 7.2: listTypeTryConvertListpack / listTypeTryConvertQuicklist) -------

def test_listpack_until_a_push_would_pass_the_limit():
    lim = limits(-1)                                     # 4096 bytes
    value = ListValue([b"x" * 3985], lim)
    assert value.encoding() == b"listpack"
    # Redis counts the listpack's bytes plus the new strings' lengths: 3999 + 97 = 4096
    value.push([b"y" * 97], False, lim)
    assert value.encoding() == b"listpack"
    value.push([b"z"], False, lim)
    assert value.encoding() == b"quicklist"


def test_back_to_listpack_at_half_the_limit_with_one_node():
    lim = limits(4)
    value = ListValue([b"a", b"b", b"c", b"d", b"e"], lim)
    assert value.encoding() == b"quicklist" and len(value.node_shapes()) == 2
    value.pop(1, False, lim)                             # one node of 4: more than half
    assert value.encoding() == b"quicklist"
    value.pop(2, False, lim)
    assert value.encoding() == b"listpack"
    value.push([b"c", b"d"], False, lim)
    assert value.encoding() == b"listpack"
    value.push([b"e"], False, lim)
    assert value.encoding() == b"quicklist"


def test_zero_and_below_minus_five_are_clamped():
    value = ListValue([b"a"], limits(0))
    assert value.encoding() == b"listpack"
    value.push([b"b"], False, limits(0))
    assert value.encoding() == b"quicklist"
    big = ListValue([b"x" * 60000], limits(-6))
    assert big.encoding() == b"listpack"
    big.push([b"x" * 5536], False, limits(-6))
    assert big.encoding() == b"quicklist"


def test_records_load_with_the_engines_limits():
    """A snapshot or RESTORE builds the list as the engine's limits make it (Redis 7.2
    loads a one-node quicklist as a listpack, a longer one as a quicklist)."""
    items = [b"a", b"b", b"c", b"d"]
    assert ListValue.from_record(items).encoding() == b"listpack"
    loaded = ListValue.from_record(items, limits(3, 1))
    assert loaded.encoding() == b"quicklist" and [c for c, _, _ in loaded.node_shapes()] == [3, 1]
    assert ListValue.from_record(items[:3], limits(3)).encoding() == b"listpack"
