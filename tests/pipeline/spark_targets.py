"""The `target` fixture of the Spark tests of format `sluice`: each server a test runs
against (Sluice, Debian's redis-server, a 3-master Redis Cluster), emptied for the test."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from redis.cluster import RedisCluster

from redis_cluster import redis_cluster  # noqa: F401 - fixtures, imported with `target` by the tests
from spark_streams import sluice_server  # noqa: F401


def source_options(options: dict) -> dict:
    """The target's options a read takes: without the sink's `idempotent`."""
    return {name: value for name, value in options.items() if name != "idempotent"}


@pytest.fixture(params=["sluice", "redis-server", "redis-cluster"])
def target(request: pytest.FixtureRequest) -> Iterator[tuple[dict, object]]:
    """(options naming the server, a flushed redis-py client for it); the sink's IDMP
    is off for redis-server 7.0, which lacks it."""
    if request.param == "sluice":
        port = request.getfixturevalue("sluice_server").port
    elif request.param == "redis-server":
        port = request.getfixturevalue("redis_server")[1]
    else:
        port = request.getfixturevalue("redis_cluster")[1]
    options = {"url": f"redis://127.0.0.1:{port}/0"}
    if request.param != "sluice":
        options["idempotent"] = "false"     # redis-server 7.0 has no XADD IDMP
    if request.param == "redis-cluster":
        options["cluster"] = "true"
        client = RedisCluster(host="127.0.0.1", port=port)
        client.flushall(target_nodes=RedisCluster.PRIMARIES)
    else:
        client = redis.Redis(port=port)
        client.flushall()
    try:
        yield options, client
    finally:
        client.close()
