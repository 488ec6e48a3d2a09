"""Sharded pub/sub without cluster mode (SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH, PUBSUB
SHARDCHANNELS / SHARDNUMSUB): the bytes a client reads are redis-server 7.0's, in RESP2
and RESP3 (confirmations counted apart from channels and patterns, the `smessage` push,
the subscribed context's refusals, RESET, MULTI, scripts); a shard message reaches only
the shard channel's subscribers (not a pattern's, not a plain channel's)."""
from __future__ import annotations

import socket

import pytest
import redis

from raw_io import read_all
from servers import SluiceServer
from test_server_differential import exchange, mask_hello, resp, script

CASES = {
    "resp2": script(
        "SUNSUBSCRIBE", "SSUBSCRIBE a", "SSUBSCRIBE b a", "SUBSCRIBE a", "PSUBSCRIBE a*",
        "PING", "PING x", "GET x", "SPUBLISH a m", "PUBLISH a n", "PUBSUB SHARDCHANNELS",
        "PUBSUB SHARDCHANNELS a*", "PUBSUB SHARDCHANNELS z*", "PUBSUB SHARDNUMSUB a b c",
        "PUBSUB SHARDNUMSUB", "PUBSUB SHARDCHANNELS a b", "PUBSUB CHANNELS",
        "PUBSUB NUMSUB a", "SUNSUBSCRIBE x", "SUNSUBSCRIBE a", "UNSUBSCRIBE", "PUNSUBSCRIBE",
        "GET x", "SUNSUBSCRIBE", "PING", "SSUBSCRIBE", "SPUBLISH a", "SPUBLISH a b c",
        "SSUBSCRIBE c", "RESET", "PUBSUB SHARDNUMSUB c", "SPUBLISH c m"),
    "resp3": script(
        "HELLO 3", "SSUBSCRIBE a b", "GET x", "PING", "SPUBLISH a m", "SPUBLISH b m2",
        "PUBSUB SHARDNUMSUB a b", "SUNSUBSCRIBE a", "SPUBLISH a m", "SUNSUBSCRIBE",
        "SUNSUBSCRIBE", "SUBSCRIBE x", "SSUBSCRIBE x", "UNSUBSCRIBE", "SUNSUBSCRIBE x"),
    "transaction_and_scripts": script("MULTI", "SSUBSCRIBE a", "SPUBLISH a m", "EXEC")
    + resp("EVAL", "return redis.pcall('ssubscribe', 'a')", "0")
    + resp("EVAL", "return redis.pcall('sunsubscribe')", "0")
    + resp("EVAL", "return redis.call('spublish', 'a', 'from script')", "0")
    + script("SSUBSCRIBE a")
    + resp("EVAL", "return redis.call('spublish', 'a', 'from script')", "0")
    + script("COMMAND COUNT", "COMMAND GETKEYS SPUBLISH a m", "COMMAND GETKEYS SSUBSCRIBE a b"),
}


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


@pytest.mark.parametrize("case", sorted(CASES))
def test_sharded_pubsub_bytes_match_redis(case, sluice, redis_server) -> None:
    data = resp("FLUSHALL") + CASES[case]
    ours = exchange(sluice.port, data)
    theirs = exchange(redis_server[1], data)
    assert mask_hello(ours) == mask_hello(theirs)


def deliveries(port: int) -> list:
    """What a shard subscriber, a plain subscriber and a pattern subscriber of the same
    name read after another client's SPUBLISH, and its count."""
    listeners = []
    for command in ("SSUBSCRIBE", "SUBSCRIBE", "PSUBSCRIBE"):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(resp(command, "news*" if command == "PSUBSCRIBE" else "news"))
        read_all(s, 0.2)
        listeners.append(s)
    publisher = redis.Redis(port=port)
    seen = [publisher.execute_command("SPUBLISH", "news", "hello"),
            publisher.execute_command("PUBSUB", "SHARDNUMSUB", "news"),
            publisher.info("stats")["pubsubshard_channels"],
            [line.split(b" ")[8:11] for line in publisher.execute_command("CLIENT", "LIST")
             .splitlines() if b"ssub=1" in line]]
    seen += [read_all(s, 0.3)[0] for s in listeners]
    for s in listeners:
        s.close()
    publisher.close()
    return seen


def test_a_shard_message_reaches_shard_subscribers_only(sluice, redis_server) -> None:
    ours = deliveries(sluice.port)
    theirs = deliveries(redis_server[1])
    assert theirs[0] == 1 and theirs[4] == b"*3\r\n$8\r\nsmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n"
    assert ours == theirs
