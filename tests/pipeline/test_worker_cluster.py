"""The reliable-consumer library (pipeline.worker, issue 16) in Redis Cluster mode, on a
real 3-master cluster: streams whose slots live on different masters, the expiry
listener on the master that owns its stream's slot, kill -9 of worker processes,
poison tasks, and a slot moved to another master under a running worker."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest
import redis
from redis.cluster import ClusterNode, RedisCluster

from pipeline.worker import RecoveryConfig, Task, Worker, WorkerConfig, dlq_key, lock_key
from pipeline.worker.keys import error_key
from redis_cluster import redis_cluster  # noqa: F401 - a fixture

GROUP = "workers"
EXPIRED = "__keyevent@0__:expired"
WORKER_SCRIPT = Path(__file__).with_name("worker_process.py")
FAST = {"group": GROUP, "lock_ttl": 0.5, "block": 0.2, "shutdown_timeout": 0.5, "cluster": True,
        "recovery": {"reconciliation_interval": 0.5, "min_idle_time": 1.0}}
# The fast path alone (the scan's MinIdleTime is far beyond the wait), then the scan alone.
ONLY_LISTENER = {"min_idle_time": 60.0, "reconciliation_interval": 60.0}
ONLY_SCAN = {"keyspace_listener": False}
WAIT_S = 30.0


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


@pytest.fixture
def workers(redis_cluster: tuple[str, int]) -> Iterator[Callable[..., subprocess.Popen]]:  # noqa: F811
    """Starts worker processes on the cluster (see worker_process.py); kills what is left."""
    started: list[subprocess.Popen] = []

    def start(consumer: str, stream: str, **overrides: object) -> subprocess.Popen:
        settings = {**FAST, "stream": stream, **overrides}
        settings["recovery"] = {**FAST["recovery"], **overrides.get("recovery", {})}
        proc = subprocess.Popen([sys.executable, str(WORKER_SCRIPT), str(redis_cluster[1]), consumer,
                                 json.dumps(settings)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


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
    return {name: dict(node.pubsub_numsub(EXPIRED))[EXPIRED] for name, node in masters(cluster).items()}


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


def done(cluster: RedisCluster) -> Counter:
    """How many times worker_process.py's handler finished each task."""
    return Counter(f["task"] for _, f in cluster.xrange("done"))


def stop_and_collect(procs: list[subprocess.Popen]) -> Counter:
    """SIGTERM the workers; the sum of their stats."""
    total: Counter = Counter()
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        total.update(json.loads(out))
    return total


def pending_of(cluster: RedisCluster, stream: str, consumer: str) -> int:
    if not cluster.exists(stream) or not cluster.xinfo_groups(stream):
        return 0
    return sum(c["pending"] for c in cluster.xinfo_consumers(stream, GROUP) if c["name"] == consumer)


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
    procs = [workers(f"w-{stream}", stream) for stream in streams]
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
    procs = {name: workers(name, stream, recovery=recovery) for name in ("w1", "w2", "w3")}
    for victim in ("w1", "w2"):
        wait_for(lambda: pending_of(cluster, stream, victim) > 0, f"{victim} to hold tasks")
        procs[victim].kill()
        procs[victim].wait()
    procs["w4"] = workers("w4", stream, recovery=recovery)
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
    workers("w1", stream, recovery={"max_retries": 2})
    dlq = dlq_key(stream)
    wait_for(lambda: cluster.exists(dlq) and cluster.xlen(dlq) == 1, "the poison task to reach the DLQ")
    wait_for(lambda: len(done(cluster)) == 5, "the good tasks to complete")
    assert masters(cluster)[owner(cluster, stream)].exists(dlq)
    [(_, dead)] = cluster.xrange(dlq)
    assert dead["task"] == "poison" and dead["_retry_count"] == "3" and dead["_original_id"] == poison
    assert dead["_last_error"] == "RuntimeError: boom on poison"


# --- topology changes ------------------------------------------------------------------

def test_listener_follows_its_streams_slot_to_another_master(cluster: RedisCluster, redis_cluster) -> None:  # noqa: F811
    """A worker (listener only: the scan would wait a minute) on a stream whose slot is
    then resharded to another master, keys and all: reset_topology moves the listener
    there, and a failed task's lock expiring there is requeued at once. Moved back
    without reset_topology, the listener follows once the worker's reads meet MOVED."""
    host, port = redis_cluster
    stream = one_stream_per_master(cluster, port)[0]
    home = owner(cluster, stream)
    elsewhere = next(name for name in masters(cluster) if name != home)
    client = RedisCluster(host=host, port=port, decode_responses=True)
    ran: list[Task] = []

    def handle(task: Task) -> None:
        ran.append(task)
        if task.retry_count == 0:
            raise RuntimeError("first attempt fails")

    config = WorkerConfig(stream, GROUP, "w1", lock_ttl=0.5, block=0.2,
                          recovery=RecoveryConfig(reconciliation_interval=60.0, min_idle_time=60.0))
    worker = Worker(client, config, handle)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        def fails_then_recovers(task: str, where: str) -> None:
            first = cluster.xadd(stream, {"task": task})
            wait_for(lambda: [t.retry_count for t in ran if t.original_id == first] == [0, 1],
                     f"{task} to fail, be requeued by the listener on {where} and run again")

        wait_for(lambda: subscribers(cluster)[home] == 1, "the listener on the stream's master")
        fails_then_recovers("before", home)

        move_slot(cluster, stream, elsewhere)
        worker.reset_topology()
        assert subscribers(cluster)[elsewhere] == 1
        wait_for(lambda: subscribers(cluster)[home] == 0, "the listener to leave the old master")
        fails_then_recovers("moved", elsewhere)

        move_slot(cluster, stream, home)
        wait_for(lambda: subscribers(cluster) == {**{n: 0 for n in masters(cluster)}, home: 1},
                 "the listener to follow the slot back on its own")
        fails_then_recovers("back", home)
    finally:
        worker.stop()
        thread.join(timeout=10)
        client.close()
        if owner(cluster, stream) != home:
            move_slot(cluster, stream, home)
    assert not thread.is_alive()
    stats = worker.stats.snapshot()
    assert stats["recovery_keyspace_requeued"] == 3 and stats["recovery_scan_requeued"] == 0
    assert stats["tasks_done"] == 3 and stats["tasks_failed"] == 3
