"""A real 3-master Redis Cluster on loopback ports, for the tests that read streams
spread over slots held by different nodes.

    from redis_cluster import redis_cluster  # the fixture: yields the first node's (host, port)
"""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import List

import pytest
import redis

from conftest import _redis_server_binary
from engine.server.testing import free_port

MASTERS = 3
READY_TIMEOUT_S = 30.0


def _start_node(binary: str, workdir: Path, port: int) -> subprocess.Popen:
    """One cluster-enabled redis-server without persistence; its own bus port (so no
    port + 10000 arithmetic can land on a taken or invalid port)."""
    node_dir = workdir / str(port)
    node_dir.mkdir()
    with open(node_dir / "redis.log", "wb") as log:
        return subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
             "--cluster-config-file", str(node_dir / "nodes.conf"), "--cluster-port", str(free_port()),
             "--dir", str(node_dir), "--save", "", "--appendonly", "no", "--daemonize", "no",
             "--loglevel", "warning"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _wait(check, what: str, nodes: List[subprocess.Popen], workdir: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if any(node.poll() is not None for node in nodes):
            break
        try:
            if check():
                return
        except redis.RedisError:
            pass
        time.sleep(0.1)
    logs = "\n".join(path.read_text(errors="replace")[-1500:] for path in workdir.glob("*/redis.log"))
    pytest.fail(f"the Redis Cluster did not become ready ({what}):\n{logs}", pytrace=False)


def _stop(nodes: List[subprocess.Popen]) -> None:
    for node in nodes:
        if node.poll() is None:
            node.terminate()
    for node in nodes:
        try:
            node.wait(timeout=5)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait(timeout=5)


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """Three masters, no replicas, every slot assigned, cluster_state:ok; stopped after."""
    binary = _redis_server_binary()
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip(reason="redis-cli is not installed; `make test` installs it with redis-server")
    workdir = tmp_path_factory.mktemp("redis-cluster")
    ports = [free_port() for _ in range(MASTERS)]
    nodes = [_start_node(binary, workdir, port) for port in ports]
    try:
        clients = [redis.Redis(port=port) for port in ports]
        _wait(lambda: all(client.ping() for client in clients), "PING", nodes, workdir)
        created = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{port}" for port in ports),
             "--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True, text=True, timeout=60)
        assert created.returncode == 0, created.stdout + created.stderr
        _wait(lambda: all(client.cluster("info").get("cluster_state") == "ok" for client in clients), "cluster_state:ok", nodes, workdir)
        for client in clients:
            client.close()
        yield "127.0.0.1", ports[0]
    finally:
        _stop(nodes)
