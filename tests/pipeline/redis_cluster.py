"""A real 3-master Redis Cluster on loopback ports, for the tests that read streams
spread over slots held by different nodes.

    from redis_cluster import redis_cluster  # the fixture: yields the first node's (host, port)
"""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import List

import pytest
import redis

from servers import RedisServer, free_port, redis_server_binary

MASTERS = 3
READY_TIMEOUT_S = 30.0


def _node(workdir: Path) -> RedisServer:
    """One cluster-enabled redis-server without persistence; its own bus port (so no
    port + 10000 arithmetic can land on a taken or invalid port)."""
    node_dir = workdir / f"node-{len(list(workdir.iterdir()))}"
    node_dir.mkdir()
    return RedisServer(["--cluster-enabled", "yes", "--cluster-config-file", str(node_dir / "nodes.conf"),
                        "--cluster-port", str(free_port()), "--save", "", "--appendonly", "no",
                        "--loglevel", "warning"], workdir=node_dir)


def _wait_until(check, what: str, nodes: List[RedisServer]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except redis.RedisError:
            pass
        time.sleep(0.1)
    logs = "\n".join(node.log_tail() for node in nodes)
    pytest.fail(f"the Redis Cluster did not become ready ({what}):\n{logs}", pytrace=False)


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """Three masters, no replicas, every slot assigned, cluster_state:ok; stopped after."""
    redis_server_binary()
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip(reason="redis-cli is not installed; `make test` installs it with redis-server")
    workdir = tmp_path_factory.mktemp("redis-cluster")
    with ExitStack() as stack:
        nodes = [stack.enter_context(_node(workdir)) for _ in range(MASTERS)]
        ports = [node.port for node in nodes]
        clients = [node.client() for node in nodes]
        created = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{port}" for port in ports),
             "--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True, text=True, timeout=60)
        assert created.returncode == 0, created.stdout + created.stderr
        _wait_until(lambda: all(client.cluster("info").get("cluster_state") == "ok" for client in clients),
                    "cluster_state:ok", nodes)
        for client in clients:
            client.close()
        yield "127.0.0.1", ports[0]
