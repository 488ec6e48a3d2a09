"""XREAD/XREADGROUP behaviour beyond what the 7.0 oracle can check: BLOCK is
parsed and validated here and handed to the server as a BlockRequest; XREAD `+`
(Redis 7.4) reads the last entry."""
import pytest

from engine import Engine, ResponseError


@pytest.fixture
def e():
    eng = Engine()
    for i in range(1, 4):
        eng.execute("XADD", "s", f"{i}-0", "f", f"v{i}")
    eng.execute("XGROUP", "CREATE", "s", "g", "$")
    return eng


def test_block_with_nothing_to_serve_leaves_a_block_request(e):
    ctx = e.new_context()
    reply = e.execute_in(ctx, [b"XREADGROUP", b"GROUP", b"g", b"c", b"BLOCK", b"250",
                               b"CLAIM", b"100", b"STREAMS", b"s", b">"])
    assert reply is None and ctx.null_array
    assert ctx.block.keys == [b"s"]
    assert ctx.block.timeout_ms == 250
    assert ctx.block.claim_min_idle == 100


def test_block_is_not_requested_when_data_is_served(e):
    ctx = e.new_context()
    e.execute_in(ctx, [b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"0"])
    assert ctx.block is None


@pytest.mark.parametrize("timeout, message", [
    ("-1", "ERR timeout is negative"),
    ("1.5", "ERR timeout is not an integer or out of range"),
    ("x", "ERR timeout is not an integer or out of range"),
])
def test_block_timeout_validation(e, timeout, message):
    with pytest.raises(ResponseError) as err:
        e.execute("XREAD", "BLOCK", timeout, "STREAMS", "s", "$")
    assert str(err.value) == message


def test_xread_plus_reads_the_last_entry(e):
    assert e.execute("XREAD", "STREAMS", "s", "+") == [[b"s", [[b"3-0", [b"f", b"v3"]]]]]
    e.execute("XDEL", "s", "3-0")
    assert e.execute("XREAD", "COUNT", "5", "STREAMS", "s", "+") == \
        [[b"s", [[b"2-0", [b"f", b"v2"]]]]]
    assert e.execute("XREAD", "STREAMS", "nosuch", "+") is None


def test_xreadgroup_rejects_plus(e):
    with pytest.raises(ResponseError, match=r"^ERR The \+ ID is meaningless"):
        e.execute("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "+")


def test_resp3_maps(e):
    ctx = e.new_context(resp3=True)
    reply = e.execute_in(ctx, [b"XREAD", b"STREAMS", b"s", b"2-0"])
    assert reply == {b"s": [[b"3-0", [b"f", b"v3"]]]}
    info = e.execute_in(ctx, [b"XINFO", b"GROUPS", b"s"])
    assert info[0][b"name"] == b"g" and info[0][b"lag"] == 0


def test_ids_round_trip_through_text_at_every_digit_count():
    """IDs are written two digits at a time from a digit count: every length from 1
    to 20 digits, the powers of ten around each, and random values read back as
    they were added."""
    import random
    from engine import Engine
    rng = random.Random(5)
    values = sorted({0, 2**64 - 1, 2**63} | {10**k + d for k in range(20) for d in (-1, 0, 1)}
                    | {rng.getrandbits(rng.randint(1, 64)) for _ in range(2000)})
    e = Engine()
    for v in values:
        if not 0 <= v < 2**64:
            continue
        ms = max(v, 1)
        e.execute("DEL", "x")
        assert e.execute("XADD", "x", "%d-%d" % (ms, v), "f", "v") == b"%d-%d" % (ms, v)
        assert e.execute("XRANGE", "x", "-", "+")[0][0] == b"%d-%d" % (ms, v)
