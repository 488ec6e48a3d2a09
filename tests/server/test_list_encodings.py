"""List encodings against a real sluice-server, ported from Redis's unit/type/list tests
(7.2+: "List listpack -> quicklist encoding conversion", "List quicklist -> listpack
encoding conversion", "List invalid list-max-listpack-size config", the compression
cases with list-compress-depth), expecting what Redis 7.2+ answers (7.0 says quicklist
for every list: DELIBERATE_DIFFERENCES in tests/differential.py). The directives'
validation is compared with the 7.0 oracle. Source: redis/redis tests/unit/type/list.tcl."""
from __future__ import annotations

import pytest
import redis

from engine.server.config.server_config import ServerConfig
from servers import SluiceServer
from test_collection_encodings import encoding, server  # noqa: F401  (a fixture)

LARGE = "x" * 8192            # list-common.tcl's largevalue(quicklist)


@pytest.fixture
def r(server):
    client = redis.Redis(port=server.port)
    client.flushall()
    client.config_set("list-max-listpack-size", -2)
    client.config_set("list-compress-depth", 0)
    yield client
    client.close()


def create(client, key, items, expected: bytes) -> None:
    client.delete(key)
    client.rpush(key, *items)
    assert encoding(client, key) == expected


@pytest.mark.parametrize("fill, large", [(3, "hello"), (-1, LARGE)])
def test_listpack_to_quicklist(r, fill, large):
    r.config_set("list-max-listpack-size", fill)
    create(r, "lst", ["a", "b", "c"], b"listpack")
    r.rpush("lst", large)
    assert encoding(r, "lst") == b"quicklist"
    create(r, "lst", ["a", "b", "c"], b"listpack")
    r.linsert("lst", "after", "b", large)
    assert encoding(r, "lst") == b"quicklist"
    create(r, "lst", ["a", "b", "c"], b"listpack")
    r.lset("lst", 0, large)
    assert encoding(r, "lst") == b"quicklist"
    create(r, "src", ["a", "b", "c", large], b"quicklist")
    create(r, "dst", ["d", "e", "f"], b"listpack")
    r.lmove("src", "dst", "right", "right")
    assert encoding(r, "dst") == b"quicklist"


def test_quicklist_to_listpack(r):
    r.config_set("list-max-listpack-size", 3)
    create(r, "lst", ["a", "b", "c", "d"], b"quicklist")
    r.rpop("lst", 3)
    assert encoding(r, "lst") == b"listpack"
    create(r, "lst", ["a", "a", "a", "d"], b"quicklist")
    r.lrem("lst", 3, "a")
    assert encoding(r, "lst") == b"listpack"
    create(r, "lst", ["a", "b", "c", "d"], b"quicklist")
    r.ltrim("lst", 1, 1)
    assert encoding(r, "lst") == b"listpack"
    r.config_set("list-max-listpack-size", -1)
    create(r, "lst", ["a", "b", "c", LARGE], b"quicklist")
    r.rpop("lst", 1)
    assert encoding(r, "lst") == b"listpack"
    create(r, "lst", ["a", LARGE], b"quicklist")
    r.lrem("lst", 1, LARGE)
    assert encoding(r, "lst") == b"listpack"
    create(r, "lst", ["a", "b", LARGE], b"quicklist")
    r.ltrim("lst", 0, 1)
    assert encoding(r, "lst") == b"listpack"
    create(r, "lst", [LARGE, "a", "b"], b"quicklist")
    r.rpop("lst", 2)
    assert encoding(r, "lst") == b"quicklist"          # one node, but more than half
    r.lset("lst", 0, "a")
    assert encoding(r, "lst") == b"listpack"


def test_out_of_range_sizes_are_clamped(r):
    r.config_set("list-max-listpack-size", 0)
    create(r, "lst", ["a"], b"listpack")
    r.rpush("lst", "b")
    assert encoding(r, "lst") == b"quicklist"
    r.config_set("list-max-listpack-size", -6)
    create(r, "lst", ["x" * 60000], b"listpack")
    r.rpush("lst", "x" * 5536)
    assert encoding(r, "lst") == b"quicklist"


def test_compressed_nodes_keep_every_element(r):
    """unit/type/list's compression cases: list-compress-depth 2 with one entry a node."""
    r.config_set("list-compress-depth", 2)
    r.config_set("list-max-ziplist-size", 1)
    for c in "abcd":
        r.lpush("list1", c * 500)
    for c in "efgj":
        r.linsert("list1", "after", "d" * 500, c * 500)
    assert [r.lpop("list1") for _ in range(8)] == [c.encode() * 500 for c in "djgfecba"]
    r.lpush("list2", "a" * 500)
    r.linsert("list2", "after", "a" * 500, "b" * 500)
    r.rpush("list2", "c" * 500)
    assert r.lindex("list2", 1) == b"b" * 500
    r.ltrim("list2", 1, -1)
    assert r.llen("list2") == 2
    r.lpush("list3", "a" * 500)
    r.lset("list3", 0, "b" * 500)
    r.lpush("list3", "c" * 500)
    r.lset("list3", 0, "d" * 500)
    assert r.lrange("list3", 0, -1) == [b"d" * 500, b"b" * 500]
    r.config_set("list-max-ziplist-size", 4)
    items = [f"item-{i:05d}-" + "z" * 100 for i in range(2000)]
    r.rpush("big", *items)
    assert r.lrange("big", 0, -1) == [i.encode() for i in items]
    assert r.lindex("big", 1000) == items[1000].encode()
    assert r.lpos("big", items[1500]) == 1500
    used = r.memory_usage("big")
    assert used < sum(map(len, items)) / 3            # the interior nodes compressed


def test_directive_errors_match_the_oracle(r, redis_server):
    theirs = redis.Redis(host=redis_server[0], port=redis_server[1])
    try:
        cases = [("list-max-listpack-size", v) for v in
                 ("2147483648", "-2147483649", "abc", "1k", "")] + \
                [("list-compress-depth", v) for v in ("-1", "2147483648", "1k", "x")]
        for name, bad in cases:
            errors = []
            for client in (r, theirs):
                with pytest.raises(redis.ResponseError) as caught:
                    client.config_set(name, bad)
                errors.append(str(caught.value))
            assert errors[0] == errors[1], (name, bad)
        for name, good in (("list-max-ziplist-size", "-2147483648"), ("list-compress-depth",
                                                                       "2147483647"),
                           ("list-max-listpack-size", "-2")):
            for client in (r, theirs):
                assert client.config_set(name, good)
            assert r.config_get("list-*") == theirs.config_get("list-*")
    finally:
        theirs.config_set("list-max-listpack-size", -2)
        theirs.config_set("list-compress-depth", 0)
        theirs.close()


def test_config_file_and_command_line(tmp_path):
    conf = tmp_path / "lists.conf"
    conf.write_text("list-max-ziplist-size 5\nlist-compress-depth 1\n")
    cfg = ServerConfig.from_args([str(conf), "--list-compress-depth", "3"])
    assert (cfg.list_max_listpack_size, cfg.list_compress_depth) == (5, 3)
    with SluiceServer(["--list-max-listpack-size", "2", "--save", ""]) as srv:
        client = redis.Redis(port=srv.port)
        client.rpush("l", "a", "b")
        assert encoding(client, "l") == b"listpack"
        client.rpush("l", "c")
        assert encoding(client, "l") == b"quicklist"
        client.close()
