"""The reliable-consumer library (sluice.worker, issue 16) in Redis Cluster mode, on a
real 3-master cluster: streams whose slots live on different masters, the expiry
listener on the master that owns its stream's slot, kill -9 of worker processes,
poison tasks, a slot moved to another master under a running worker, and a failover
to a replica; each with the sync Worker and the AsyncWorker."""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Callable

import pytest
import redis
import redis.asyncio.cluster
from redis.cluster import RedisCluster

from sluice.worker import AsyncWorker, RecoveryConfig, Task, Worker, WorkerConfig, dlq_key, lock_key
from sluice.worker.keys import error_key
from redis_cluster import redis_cluster, running_cluster  # noqa: F401 - a fixture
from worker_support import ProcessWorker, done, stop_and_collect, wait_for

GROUP = "workers"
EXPIRED = "__keyevent@0__:expired"
# 4 handlers (not the default 16): the kill -9 tests need tasks still held when they
# freeze a worker.
FAST = {"stream": "tasks", "group": GROUP, "concurrency": 4,
        "lock_ttl": 0.5, "block": 0.2, "shutdown_timeout": 0.5, "cluster": True,
        "recovery": {"reconciliation_interval": 0.5, "min_idle_time": 1.0}}
# The fast path alone (the scan's MinIdleTime is far beyond the wait), then the scan alone.
ONLY_LISTENER = {"min_idle_time": 60.0, "reconciliation_interval": 60.0}
ONLY_SCAN = {"keyspace_listener": False}


@pytest.fixture
def cluster(redis_cluster: tuple[str, int]) -> Iterator[RedisCluster]:  # noqa: F811 - the fixture
    """A client of the cluster (the seed is its first node), every master emptied and
    its keyspace events off: each worker must turn them on where it listens."""
    host, port = redis_cluster
    client = RedisCluster(host=host, port=port, decode_responses=True)
    client.flushall(target_nodes=RedisCluster.PRIMARIES)
    client.config_set("notify-keyspace-events", "", target_nodes=RedisCluster.PRIMARIES)
    yield client
    client.close()


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    """Which worker: Worker on redis.cluster.RedisCluster, or AsyncWorker on
    redis.asyncio.cluster.RedisCluster."""
    return request.param


@pytest.fixture
def workers(redis_cluster: tuple[str, int], mode: str) -> Iterator[Callable[..., ProcessWorker]]:  # noqa: F811
    """Starts worker processes on the cluster (see worker_process.py); kills what is left."""
    started: list[ProcessWorker] = []

    def start(consumer: str, **overrides: object) -> ProcessWorker:
        settings = {**FAST, **overrides, "recovery": {**FAST["recovery"], **overrides.get("recovery", {})}}
        started.append(ProcessWorker(redis_cluster[1], consumer, mode, settings))
        return started[-1]

    yield start
    for worker in started:
        worker.close()


def masters(cluster: RedisCluster) -> dict[str, redis.Redis]:
    """A direct client of each master, by node name ("host:port")."""
    return {node.name: cluster.get_redis_connection(node) for node in cluster.get_primaries()}


def owner(cluster: RedisCluster, key: str) -> str:
    """The master that owns `key`'s slot, asked of the nodes themselves (not the client's cache)."""
    slot = cluster.keyslot(key)
    for name, node in masters(cluster).items():
        if any(first <= slot <= last and f"{host}:{port}" == name
               for first, last, (host, port, *_), *_ in node.execute_command("CLUSTER SLOTS")):
            return name
    raise AssertionError(f"no master owns slot {slot}")


def one_stream_per_master(cluster: RedisCluster, seed_port: int) -> list[str]:
    """Stream names whose slots belong to different masters, the seed node's last (so
    the first is never on the node a client connected to first)."""
    found: dict[str, str] = {}
    n = 0
    while len(found) < len(masters(cluster)):
        found.setdefault(owner(cluster, f"tasks{n}"), f"tasks{n}")
        n += 1
    return sorted(found.values(), key=lambda s: owner(cluster, s).endswith(f":{seed_port}"))


def subscribers(cluster: RedisCluster) -> dict[str, int]:
    """How many clients listen to expired-key events on each master."""
    return {name: numsub(node) for name, node in masters(cluster).items()}


def move_slot(cluster: RedisCluster, key: str, to: str) -> None:
    """Reshards `key`'s slot, keys and all, to the master `to`, as redis-cli --cluster
    reshard does: IMPORTING/MIGRATING, MIGRATE of its keys, then SETSLOT NODE everywhere."""
    nodes = masters(cluster)
    slot, source = cluster.keyslot(key), owner(cluster, key)
    src, dst = nodes[source], nodes[to]
    src_id, dst_id = src.execute_command("CLUSTER MYID"), dst.execute_command("CLUSTER MYID")
    dst.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", src_id)
    src.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", dst_id)
    keys = src.execute_command("CLUSTER GETKEYSINSLOT", slot, 1000)
    if keys:
        host, port = to.rsplit(":", 1)
        src.execute_command("MIGRATE", host, port, "", 0, 5000, "KEYS", *keys)
    for name in [to, source, *(n for n in nodes if n not in (to, source))]:
        nodes[name].execute_command("CLUSTER SETSLOT", slot, "NODE", dst_id)
    wait_for(lambda: owner(cluster, key) == to, f"slot {slot} to move to {to}")


# --- keys and routing ------------------------------------------------------------------

def test_a_tasks_keys_live_on_its_streams_master(cluster: RedisCluster, redis_cluster) -> None:  # noqa: F811
    for stream in one_stream_per_master(cluster, redis_cluster[1]):
        home = owner(cluster, stream)
        assert {owner(cluster, k) for k in (lock_key(stream, "1-0"), error_key(stream, "1-0"),
                                            dlq_key(stream))} == {home}


def test_streams_on_every_master_each_with_its_listener(cluster: RedisCluster, workers, redis_cluster) -> None:  # noqa: F811
    """One worker per stream, the streams' slots on three different masters: every task
    runs, and each worker listens (with expired events turned on) on its stream's master."""
    streams = one_stream_per_master(cluster, redis_cluster[1])
    for stream in streams:
        for n in range(20):
            cluster.xadd(stream, {"task": f"{stream}-{n}"})
    procs = [workers(f"w-{stream}", stream=stream) for stream in streams]
    wait_for(lambda: len(done(cluster)) == 60, "every task to complete")
    assert subscribers(cluster) == {owner(cluster, s): 1 for s in streams}
    for name, node in masters(cluster).items():
        flags = node.config_get("notify-keyspace-events")["notify-keyspace-events"]
        assert {"E", "x"} <= set(flags), f"{name}: {flags!r}"
    stats = stop_and_collect(procs)
    assert stats["tasks_done"] == 60 and set(done(cluster).values()) == {1}


# --- recovery --------------------------------------------------------------------------

@pytest.mark.parametrize("recovery", [ONLY_LISTENER, ONLY_SCAN], ids=["expiry-events", "scan"])
def test_kill_9_mid_task_loses_nothing(cluster: RedisCluster, workers, redis_cluster, recovery: dict) -> None:  # noqa: F811
    """On a stream whose master is not the seed node: workers killed with kill -9 while
    they hold tasks; their tasks are requeued by the listener on that master (or by the
    scan alone) and every task completes."""
    stream = one_stream_per_master(cluster, redis_cluster[1])[0]
    for n in range(120):
        cluster.xadd(stream, {"task": f"t{n}", "sleep": 0.05})
    procs = {name: workers(name, stream=stream, recovery=recovery) for name in ("w1", "w2", "w3")}
    if recovery is ONLY_LISTENER:                    # no expiry may pass before all listen
        wait_for(lambda: subscribers(cluster)[owner(cluster, stream)] == 3, "the workers' listeners")
    for victim in ("w1", "w2"):
        procs[victim].kill_holding_locks(cluster)
    procs["w4"] = workers("w4", stream=stream, recovery=recovery)
    wait_for(lambda: len(done(cluster)) == 120, "every task to complete", timeout=20)
    stats = stop_and_collect([procs["w3"], procs["w4"]])
    requeued = [f for _, f in cluster.xrange(stream) if "_retry_count" in f]
    print(f"\n{recovery}: done {len(done(cluster))}/120, requeued {len(requeued)}, stats {dict(stats)}")
    assert requeued, "the killed workers' tasks were never requeued"
    if recovery is ONLY_LISTENER:
        assert stats["recovery_keyspace_requeued"] >= 1 and stats["recovery_scan_requeued"] == 0
    else:
        assert stats["recovery_scan_requeued"] >= 1 and stats["recovery_keyspace_requeued"] == 0


def test_poison_task_ends_in_the_dlq_on_the_streams_master(cluster: RedisCluster, workers, redis_cluster) -> None:  # noqa: F811
    stream = one_stream_per_master(cluster, redis_cluster[1])[0]
    poison = cluster.xadd(stream, {"task": "poison", "fail": 1})
    for n in range(5):
        cluster.xadd(stream, {"task": f"t{n}"})
    workers("w1", stream=stream, recovery={"max_retries": 2})
    dlq = dlq_key(stream)
    wait_for(lambda: cluster.exists(dlq) and cluster.xlen(dlq) == 1, "the poison task to reach the DLQ")
    wait_for(lambda: len(done(cluster)) == 5, "the good tasks to complete")
    assert masters(cluster)[owner(cluster, stream)].exists(dlq)
    [(_, dead)] = cluster.xrange(dlq)
    assert dead["task"] == "poison" and dead["_retry_count"] == "3" and dead["_original_id"] == poison
    assert dead["_last_error"] == "RuntimeError: boom on poison"


# --- topology changes ------------------------------------------------------------------

class ListenerOnlyWorker:
    """A worker in a thread of this test (so the test can call its reset_topology), on
    its own cluster client, recovering by the listener alone (the scan would wait a
    minute); its handler fails each task's first attempt, and a failed task waits for
    its lock to expire (retry_backoff "lock"), so a task runs a second time only once
    the listener requeued it on that expiry. The AsyncWorker runs on
    its own event loop in that thread."""

    def __init__(self, port: int, stream: str, mode: str) -> None:
        config = WorkerConfig(stream, GROUP, "w1", lock_ttl=0.5, block=0.2,
                              recovery=RecoveryConfig(reconciliation_interval=60.0, min_idle_time=60.0,
                                                      retry_backoff="lock"))
        self.attempts: list[Task] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        if mode == "sync":
            self.worker = Worker(RedisCluster(host="127.0.0.1", port=port, decode_responses=True),
                                 config, self._handle)
            self._thread = threading.Thread(target=self._run_sync)
        else:
            self._loop = asyncio.new_event_loop()
            client = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=port, decode_responses=True)
            self.worker = AsyncWorker(client, config, self._handle_async)
            self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._run_async(),))

    def _run_sync(self) -> None:
        self.worker.run()
        self.worker.client.close()

    async def _run_async(self) -> None:
        await self.worker.run()
        await self.worker.client.aclose()

    def _handle(self, task: Task) -> None:
        self.attempts.append(task)
        if task.retry_count == 0:
            raise RuntimeError("first attempt fails")

    async def _handle_async(self, task: Task) -> None:
        self._handle(task)

    def reset_topology(self) -> None:
        if self._loop is None:
            self.worker.reset_topology()
        else:
            asyncio.run_coroutine_threadsafe(self.worker.reset_topology(), self._loop).result(timeout=10)

    def __enter__(self) -> "ListenerOnlyWorker":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.worker.stop()
        self._thread.join(timeout=10)
        assert not self._thread.is_alive()
        if self._loop is not None:
            self._loop.close()

    def recovers(self, cluster: RedisCluster, task: str, where: str) -> None:
        """Adds `task` and waits for it to fail, be requeued and run again."""
        first = cluster.xadd(self.worker.config.stream, {"task": task})
        wait_for(lambda: [t.retry_count for t in self.attempts if t.original_id == first] == [0, 1],
                 f"{task} to fail, be requeued by the listener on {where} and run again")


def numsub(node: redis.Redis) -> int:
    return dict(node.pubsub_numsub(EXPIRED))[EXPIRED]


def test_listener_follows_its_streams_slot_to_another_master(cluster: RedisCluster, redis_cluster,  # noqa: F811
                                                             mode: str) -> None:
    """The stream's slot is resharded to another master, keys and all: reset_topology
    moves the listener there, and a failed task's lock expiring there is requeued at
    once. Moved back without reset_topology, the listener follows once the worker's
    reads meet MOVED."""
    stream = one_stream_per_master(cluster, redis_cluster[1])[0]
    home = owner(cluster, stream)
    elsewhere = next(name for name in masters(cluster) if name != home)
    try:
        with ListenerOnlyWorker(redis_cluster[1], stream, mode) as w:
            wait_for(lambda: subscribers(cluster)[home] == 1, "the listener on the stream's master")
            w.recovers(cluster, "before", home)

            move_slot(cluster, stream, elsewhere)
            w.reset_topology()
            assert subscribers(cluster)[elsewhere] == 1
            wait_for(lambda: subscribers(cluster)[home] == 0, "the listener to leave the old master")
            w.recovers(cluster, "moved", elsewhere)

            move_slot(cluster, stream, home)
            wait_for(lambda: subscribers(cluster) == {**{n: 0 for n in masters(cluster)}, home: 1},
                     "the listener to follow the slot back on its own")
            w.recovers(cluster, "back", home)
    finally:
        if owner(cluster, stream) != home:
            move_slot(cluster, stream, home)
    stats = w.worker.stats.snapshot()
    assert stats["recovery_keyspace_requeued"] == 3 and stats["recovery_scan_requeued"] == 0
    assert stats["tasks_done"] == 3 and stats["tasks_failed"] == 3


@pytest.fixture(scope="module")
def replicated_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    """Three masters with a replica each, for failovers (a short node timeout spreads
    the news of a new replica sooner); a client of it."""
    with running_cluster(tmp_path_factory.mktemp("redis-cluster-replicas"), replicas=1,
                         node_timeout_ms=2000) as nodes:
        client = RedisCluster(host="127.0.0.1", port=nodes[0].port, decode_responses=True)
        yield client
        client.close()


def test_reset_topology_after_a_failover(replicated_cluster: RedisCluster, mode: str) -> None:
    """The stream's master hands over to its replica (CLUSTER FAILOVER): after
    reset_topology the listener is on the new master, has turned its expired events on
    (CONFIG SET does not replicate), and recovers a failed task's lock expiring there."""
    cluster = replicated_cluster
    cluster.config_set("notify-keyspace-events", "", target_nodes=RedisCluster.ALL_NODES)
    stream = "tasks0"
    old = cluster.get_redis_connection(cluster.get_node_from_key(stream))
    new = cluster.get_redis_connection(cluster.get_node_from_key(stream, replica=True))
    with ListenerOnlyWorker(cluster.get_default_node().port, stream, mode) as w:
        wait_for(lambda: numsub(old) == 1, "the listener on the stream's master")
        new.execute_command("CLUSTER FAILOVER")
        wait_for(lambda: new.execute_command("ROLE")[0] == "master" and old.execute_command("ROLE")[0] == "slave",
                 "the replica to take over")
        w.reset_topology()
        assert numsub(new) == 1
        assert {"E", "x"} <= set(new.config_get("notify-keyspace-events")["notify-keyspace-events"])
        wait_for(lambda: numsub(old) == 0, "the listener to leave the old master")
        w.recovers(cluster, "after", "the new master")
    stats = w.worker.stats.snapshot()
    assert stats["recovery_keyspace_requeued"] == 1 and stats["recovery_scan_requeued"] == 0
