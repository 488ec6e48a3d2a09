"""Replies of entry lists encoded straight to RESP (the server's contexts) are the
bytes the Python values of the embedded API encode to, for every shape: XRANGE and
XREVRANGE, XREAD over several streams, XREADGROUP with new entries, CLAIM, history
reads with deleted entries, XCLAIM and XAUTOCLAIM (JUSTID, deleted IDs), in RESP2
and RESP3.

Two engines run the same random operations in lockstep, each on its own manual
clock; one answers with Python values, the other with EncodedReply."""
import pytest
from hypothesis import given, settings, strategies as st

from engine import Engine, ManualClock, ResponseError
from engine.resp.reply import NULL_ARRAY
from engine.resp.writer import EncodedReply
from engine.resp.codec import encode_reply

T0 = 1_700_000_000_000
KEYS = [b"s1", b"s2"]

field_sets = st.sampled_from([[b"f", b"v"], [b"f", b"w"], [b"a", b"1", b"b", b"2"],
                              [b"", b"\r\n"], [b"f", b"x" * 300]])
key = st.sampled_from(KEYS)
count = st.integers(0, 6)
ops = st.one_of(
    st.tuples(st.just("xadd"), key, field_sets),
    st.tuples(st.just("xdel"), key, st.integers(1, 15)),
    st.tuples(st.just("xrange"), key, st.integers(0, 45), st.integers(0, 45), count,
              st.booleans()),
    st.tuples(st.just("xread"), st.integers(0, 45), st.integers(0, 45), count),
    st.tuples(st.just("readgroup"), st.sampled_from([b"c1", b"c2"]), count,
              st.sampled_from([None, 0, 5, 100]), st.booleans()),
    st.tuples(st.just("history"), st.sampled_from([b"c1", b"c2"]), st.integers(0, 8),
              count),
    st.tuples(st.just("xack"), key, st.integers(1, 40)),
    st.tuples(st.just("xclaim"), key, st.sampled_from([b"c1", b"c3"]), st.integers(0, 50),
              st.lists(st.integers(1, 15), min_size=1, max_size=5), st.booleans(),
              st.booleans()),
    st.tuples(st.just("xautoclaim"), key, st.sampled_from([b"c1", b"c3"]),
              st.integers(0, 50), st.integers(0, 10), st.integers(1, 6), st.booleans()),
    st.tuples(st.just("tick"), st.integers(1, 60)),
)


class Side:
    def __init__(self, encoded: bool, resp3: bool):
        self.clock = ManualClock(T0)
        self.engine = Engine(clock=self.clock)
        self.ctx = self.engine.new_context(0, resp3)
        self.ctx.nil_array = NULL_ARRAY
        self.ctx.encode_replies = encoded
        self.resp3 = resp3
        self.seq = 0
        for k in KEYS:
            self.engine.execute("XGROUP", "CREATE", k, "g", "0", "MKSTREAM")

    def run(self, argv):
        """The reply as the server would send it (an error as its text)."""
        try:
            reply = self.engine.execute_in(self.ctx, [bytes(a) if isinstance(a, bytes)
                                                      else str(a).encode() for a in argv])
        except ResponseError as err:
            return "error", str(err)
        return type(reply) is EncodedReply, encode_reply(reply, self.resp3,
                                                         self.ctx.null_array)


def command(op, seq: int):
    kind = op[0]
    if kind == "xadd":
        return ["XADD", op[1], "%d-1" % seq] + op[2]
    if kind == "xdel":
        return ["XDEL", op[1], "%d-1" % op[2]]
    if kind == "xrange":
        lo, hi = sorted((op[2], op[3]))
        cmd = ["XREVRANGE", op[1], "%d" % hi, "%d" % lo] if op[5] else \
            ["XRANGE", op[1], "(%d-1" % lo if lo else "-", "%d" % hi]
        return cmd + (["COUNT", op[4]] if op[4] else [])
    if kind == "xread":
        return ["XREAD"] + (["COUNT", op[3]] if op[3] else []) + \
            ["STREAMS", b"s1", b"s2", "%d-0" % op[1], "%d-0" % op[2]]
    if kind == "readgroup":
        cmd = ["XREADGROUP", "GROUP", "g", op[1]]
        if op[2]:
            cmd += ["COUNT", op[2]]
        if op[3] is not None:
            cmd += ["CLAIM", op[3]]
        if op[4]:
            cmd += ["NOACK"]
        return cmd + ["STREAMS", b"s1", b"s2", ">", ">"]
    if kind == "history":
        return ["XREADGROUP", "GROUP", "g", op[1]] + (["COUNT", op[3]] if op[3] else []) + \
            ["STREAMS", b"s1", b"s2", "%d-0" % op[2], "0"]
    if kind == "xack":
        return ["XACK", op[1], "g", "%d-1" % op[2]]
    if kind == "xclaim":
        return ["XCLAIM", op[1], "g", op[2], op[3]] + ["%d-1" % i for i in op[4]] + \
            (["JUSTID"] if op[5] else []) + (["FORCE"] if op[6] else [])
    if kind == "xautoclaim":
        return ["XAUTOCLAIM", op[1], "g", op[2], op[3], "%d-0" % op[4], "COUNT", op[5]] + \
            (["JUSTID"] if op[6] else [])
    raise AssertionError(kind)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.booleans(), st.lists(ops, min_size=20, max_size=80))
def test_encoded_replies_are_the_python_replies_encoded(resp3, sequence):
    plain, encoded = Side(False, resp3), Side(True, resp3)
    seq = 0
    for op in sequence:
        if op[0] == "tick":
            plain.clock.advance(op[1])
            encoded.clock.advance(op[1])
            continue
        seq += 1
        argv = command(op, seq)
        was_plain, expected = plain.run(argv)
        _, got = encoded.run(argv)
        assert got == expected, argv
        assert was_plain is not True      # the embedded side never gets RESP


def test_big_claim_reply_matches():
    """1,000 claimed entries over many nodes, idle times and counts varying."""
    for resp3 in (False, True):
        plain, encoded = Side(False, resp3), Side(True, resp3)
        for side in (plain, encoded):
            for i in range(1, 3001):
                side.engine.execute("XADD", "s1", "%d-1" % i, "f", "v%d" % i,
                                    *(["g", "h"] if i % 7 == 0 else []))
            side.engine.execute("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s1", ">")
            side.engine.execute("XDEL", "s1", *["%d-1" % i for i in range(5, 3001, 11)])
            side.clock.advance(5000)
        argv = ["XREADGROUP", "GROUP", "g", "c2", "COUNT", 1000, "CLAIM", 100,
                "STREAMS", "s1", ">"]
        is_encoded, got = encoded.run(argv)
        assert is_encoded
        assert got == plain.run(argv)[1]
        assert got.count(b":5000\r\n:1\r\n") == 1000


def test_history_with_deleted_entries():
    """[id, nil] for a pending entry whose stream entry is gone: *-1 / _."""
    for resp3 in (False, True):
        plain, encoded = Side(False, resp3), Side(True, resp3)
        for argv in (["XADD", "s1", "1-1", "f", "v"], ["XADD", "s1", "2-1", "f", "w"],
                     ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s1", "s2", ">", ">"],
                     ["XDEL", "s1", "1-1"],
                     ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s1", "s2", "0", "0"]):
            expected = plain.run(argv)[1]
            assert encoded.run(argv)[1] == expected
        assert (b"$3\r\n1-1\r\n" + (b"_\r\n" if resp3 else b"*-1\r\n")) in expected


def test_autoclaim_with_deleted_entries():
    for resp3 in (False, True):
        for justid in ([], ["JUSTID"]):
            plain, encoded = Side(False, resp3), Side(True, resp3)
            for argv in (["XADD", "s1", "1-1", "f", "v"], ["XADD", "s1", "2-1", "f", "w"],
                         ["XADD", "s1", "3-1", "a", "b", "c", "d"],
                         ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s1", ">"],
                         ["XDEL", "s1", "2-1"],
                         ["XAUTOCLAIM", "s1", "g", "c2", "0", "0", "COUNT", "2"] + justid,
                         ["XAUTOCLAIM", "s1", "g", "c2", "0", "0"] + justid):
                expected = plain.run(argv)[1]
                assert encoded.run(argv)[1] == expected
                if argv[-1] == "2" or argv[-2:] == ["2", "JUSTID"]:
                    assert expected.endswith(b"*1\r\n$3\r\n2-1\r\n")   # deleted IDs
            first = plain.run(["XAUTOCLAIM", "s1", "g", "c3", "0", "0"])[1]
            assert first.startswith(b"*3\r\n$3\r\n0-0\r\n*2\r\n")
