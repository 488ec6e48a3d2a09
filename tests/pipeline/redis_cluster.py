"""A real 3-master Redis Cluster on loopback ports, for the tests that read streams
spread over slots held by different nodes.

    from redis_cluster import redis_cluster  # the fixture: yields the first node's (host, port)

`running_cluster` starts one with replicas too, for failover tests.
"""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import List

import pytest
import redis

from servers import RedisServer, free_port, redis_server_binary

MASTERS = 3
READY_TIMEOUT_S = 30.0


def _node(workdir: Path, node_timeout_ms: int) -> RedisServer:
    """One cluster-enabled redis-server without persistence; its own bus port (so no
    port + 10000 arithmetic can land on a taken or invalid port)."""
    node_dir = workdir / f"node-{len(list(workdir.iterdir()))}"
    node_dir.mkdir()
    return RedisServer(["--cluster-enabled", "yes", "--cluster-config-file", str(node_dir / "nodes.conf"),
                        "--cluster-port", str(free_port()), "--cluster-node-timeout", str(node_timeout_ms),
                        "--save", "", "--appendonly", "no", "--loglevel", "warning"], workdir=node_dir)


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


@contextmanager
def running_cluster(workdir: Path, replicas: int = 0, node_timeout_ms: int = 15000) -> Iterator[List[RedisServer]]:
    """MASTERS masters with `replicas` replicas each, every slot assigned, every node
    in cluster_state:ok and listing every replica; yields the nodes, stops them after."""
    redis_server_binary()
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip(reason="redis-cli is not installed; `make test` installs it with redis-server")
    with ExitStack() as stack:
        nodes = [stack.enter_context(_node(workdir, node_timeout_ms)) for _ in range(MASTERS * (1 + replicas))]
        clients = [node.client() for node in nodes]
        created = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{node.port}" for node in nodes),
             "--cluster-replicas", str(replicas), "--cluster-yes"],
            capture_output=True, text=True, timeout=60)
        assert created.returncode == 0, created.stdout + created.stderr
        _wait_until(lambda: all(client.cluster("info").get("cluster_state") == "ok" for client in clients),
                    "cluster_state:ok", nodes)
        # A node lists a replica in CLUSTER SLOTS (where clients learn of it) once it heard
        # through the bus that the replica has its data.
        _wait_until(lambda: all(len(served) == 3 + replicas
                                for client in clients for served in client.execute_command("CLUSTER SLOTS")),
                    "every node listing every replica", nodes)
        for client in clients:
            client.close()
        yield nodes


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """Three masters, no replicas; the first node's (host, port)."""
    with running_cluster(tmp_path_factory.mktemp("redis-cluster")) as nodes:
        yield "127.0.0.1", nodes[0].port
