"""Starting a server as a child process on a free port: a port another server took first
(between free_port() and the child's bind) is never mistaken for the child's own, whose
PONG it would answer while the child exits (two test sessions then share one server)."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

import servers
from examples import processes
from servers import RedisServer, ServerDidNotStart, SluiceServer, needs_redis


@pytest.fixture
def stranger() -> Iterator[SluiceServer]:
    """A server holding a port the tests then try to start on."""
    with SluiceServer(["--save", ""], loglevel="warning") as server:
        redis.Redis(port=server.port).set("owner", "stranger")
        yield server


def owner_pid(port: int) -> int:
    return int(redis.Redis(port=port).info("server")["process_id"])


@needs_redis
def test_a_port_held_by_another_server_fails_the_start(stranger: SluiceServer) -> None:
    with pytest.raises(ServerDidNotStart, match="Address already in use"):
        SluiceServer(["--save", ""], loglevel="warning", port=stranger.port).start()
    with pytest.raises(ServerDidNotStart, match="Address already in use"):
        RedisServer(port=stranger.port).start()
    assert owner_pid(stranger.port) == stranger.proc.pid


@needs_redis
def test_a_free_port_taken_before_the_bind_is_given_up_for_another(
        stranger: SluiceServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race itself, its timing forced: free_port() first names the stranger's port."""
    free_port = processes.free_port
    for module in (processes, servers):
        monkeypatch.setattr(module, "free_port",
                            lambda taken=iter([stranger.port]): next(taken, None) or free_port())
    with SluiceServer(["--save", ""], loglevel="warning") as ours, RedisServer() as oracle:
        for server in (ours, oracle):
            assert server.port != stranger.port and owner_pid(server.port) == server.proc.pid
            assert redis.Redis(port=server.port).get("owner") is None
