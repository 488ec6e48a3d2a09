"""The reliable-consumer library (sluice.worker, issue 16) against a real redis-server:
its scripts, its configuration checks, and worker processes killed with kill -9,
stopped with SIGTERM, handed slow and poison tasks."""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pytest
import redis
import redis.asyncio
from redis.crc import key_slot

import servers
from engine import AsyncEmbeddedRedis, EmbeddedRedis, Engine
from sluice.worker import (AsyncWorker, ConfigError, RecoveryConfig, Scripts, Task, Worker, WorkerConfig,
                             dlq_key, ensure_expired_events, lock_key)
from sluice.worker.flows import resolve, run_sync, then
from sluice.worker.keys import error_key
from worker_process import async_handler, config_of, sync_handler
from worker_support import ProcessWorker, done, stop_and_collect, wait_for
from worker_thread import WorkerThread

STREAM, GROUP = "tasks", "workers"
EXPIRED = "__keyevent@0__:expired"
# Fast settings for the worker tests: a lock lives 0.5 s, the scan runs every 0.5 s.
# 4 handlers (not the default 16): the kill -9 tests need tasks still held when they
# freeze a worker.
FAST = {"stream": STREAM, "group": GROUP, "concurrency": 4,
        "lock_ttl": 0.5, "block": 0.2, "shutdown_timeout": 0.5,
        "recovery": {"reconciliation_interval": 0.5, "min_idle_time": 1.0}}


# Without persistence: no test here restarts a server.
@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with servers.RedisServer(servers.ORACLE_FLAGS, workdir=tmp_path_factory.mktemp("worker-redis")) as srv:
        yield srv.port


@pytest.fixture(scope="module")
def sluice_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with servers.SluiceServer(["--save", "", "--appendonly", "no"],
                              workdir=tmp_path_factory.mktemp("worker-sluice")) as srv:
        yield srv.port


@dataclass
class Backend:
    """Where the worker runs: a server's port, or an in-process engine."""

    name: str
    port: int = 0
    engine: Optional[Engine] = None

    def connect(self, **options: object) -> redis.Redis:
        if self.engine is not None:
            return EmbeddedRedis(self.engine, **options)
        return redis.Redis(port=self.port, **options)

    def connect_async(self, **options: object) -> redis.asyncio.Redis:
        if self.engine is not None:
            return AsyncEmbeddedRedis(self.engine, **options)
        return redis.asyncio.Redis(port=self.port, **options)


SERVERS = ["redis", "sluice"]


@pytest.fixture(params=[*SERVERS, "embedded"])
def backend(request: pytest.FixtureRequest) -> Backend:
    """redis-server 7.0, sluice-server (one each for the module), the embedded engine (one per test)."""
    if request.param == "embedded":
        return Backend("embedded", engine=Engine())
    return Backend(request.param, port=request.getfixturevalue(f"{request.param}_server"))


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    """Which worker: Worker on redis.Redis, or AsyncWorker on redis.asyncio.Redis."""
    return request.param


@pytest.fixture
def client(backend: Backend) -> Iterator[redis.Redis]:
    c = backend.connect(decode_responses=True)
    c.flushall()
    if backend.engine is None:
        c.config_set("notify-keyspace-events", "")      # each worker turns the events on itself
    yield c
    c.close()


class ThreadWorker(WorkerThread):
    """A worker in a thread of this process (on the embedded engine): the sync Worker,
    or the AsyncWorker with its own event loop."""

    def __init__(self, backend: Backend, mode: str, config: WorkerConfig,
                 handler_for: Callable[[object], Callable], **client_options: object) -> None:
        """`handler_for(client)`: the handler, given the worker's client."""
        client = (backend.connect if mode == "sync" else backend.connect_async)(**client_options)
        super().__init__((Worker if mode == "sync" else AsyncWorker)(client, config, handler_for(client)))

    def close(self) -> None:
        if self.thread.is_alive():
            self.stop()


@pytest.fixture
def workers(backend: Backend, mode: str) -> Iterator[Callable[..., ProcessWorker | ThreadWorker]]:
    """Starts workers: processes on a server, threads on the embedded engine; stops
    what is left at the end."""
    started: list = []

    def start(consumer: str, **overrides: object) -> ProcessWorker | ThreadWorker:
        settings = {**FAST, **overrides}
        settings["recovery"] = {**FAST["recovery"], **overrides.get("recovery", {})}
        if backend.engine is not None:
            handler_for = sync_handler if mode == "sync" else async_handler
            worker = ThreadWorker(backend, mode, config_of(consumer, settings),
                                  lambda client: handler_for(client, consumer), decode_responses=True)
        else:
            worker = ProcessWorker(backend.port, consumer, mode, settings)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.close()


def add_tasks(client: redis.Redis, count: int, **fields: object) -> list[str]:
    return [client.xadd(STREAM, {"task": f"t{n}", **fields}) for n in range(count)]


def starts(client: redis.Redis) -> list[str]:
    """The handler starts worker_process.py recorded, in order: "task consumer"."""
    return [f"{f['task']} {f['consumer']}" for _, f in client.xrange("starts")]


def requeued_entries(client: redis.Redis) -> list[dict]:
    return [fields for _, fields in client.xrange(STREAM) if "_retry_count" in fields]


# --- configuration ---------------------------------------------------------------------

def test_defaults_are_the_rfcs() -> None:
    r = RecoveryConfig()
    assert (r.reconciliation_interval, r.min_idle_time, r.batch_size, r.max_retries, r.field_prefix) == \
        (60.0, 30.0, 50, 3, "_")
    c = WorkerConfig("orders", "g", "c")
    assert c.dlq == "{orders}:dlq"
    assert c.heartbeat == c.lock_ttl / 2
    assert WorkerConfig("orders", "g", "c", recovery=RecoveryConfig(dlq_stream="")).dlq == ""


@pytest.mark.parametrize("make, message", [
    (lambda: WorkerConfig("s", "g", "c", lock_ttl=20), "min_idle_time (30.0 s) must be at least 2 x lock_ttl"),
    (lambda: WorkerConfig("s", "g", "c", lock_ttl=1, heartbeat_interval=1), "heartbeat_interval (1 s) must be below"),
    (lambda: WorkerConfig("s", "g", "c", recovery=RecoveryConfig(dlq_stream="dead")), "does not share the hash slot"),
    (lambda: WorkerConfig("", "g", "c"), "stream must be a non-empty string"),
    (lambda: WorkerConfig("s", "g", "c", concurrency=0), "concurrency must be a positive integer"),
    (lambda: RecoveryConfig(batch_size=0), "batch_size must be a positive integer"),
    (lambda: RecoveryConfig(max_retries=-1), "max_retries must be an integer >= 0"),
    (lambda: RecoveryConfig(field_prefix=""), "field_prefix must not be empty"),
    (lambda: RecoveryConfig(min_idle_time=0), "min_idle_time must be a positive number"),
])
def test_config_errors_say_what_is_wrong(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make()


@pytest.mark.parametrize("stream", ["orders", "app:{tenant7}:orders"])
def test_locks_errors_and_dlq_share_the_streams_slot(stream: str) -> None:
    keys = [lock_key(stream, "1-0"), error_key(stream, "1-0"), dlq_key(stream)]
    assert {key_slot(k.encode()) for k in keys} == {key_slot(stream.encode())}
    assert WorkerConfig(stream, "g", "c").dlq == dlq_key(stream)


def test_each_worker_refuses_the_other_kind_of_client() -> None:
    config = WorkerConfig(STREAM, GROUP, "c")
    with pytest.raises(TypeError, match="Worker takes a sync client, not AsyncEmbeddedRedis: use AsyncWorker"):
        Worker(AsyncEmbeddedRedis(), config, print)
    with pytest.raises(TypeError, match="AsyncWorker takes a redis.asyncio client, not Redis: use Worker"):
        AsyncWorker(redis.Redis(), config, print)


def test_a_flow_runs_to_its_end_on_values_and_refuses_awaitables() -> None:
    """sluice/worker/flows.py: one coroutine serves both workers; a sync run of it must
    never meet an awaitable (it would drop the step silently)."""
    class Suspends:
        """An awaitable that suspends once, as an asyncio client's reply does."""

        def __await__(self):
            yield
            return 1

    async def flow(reply: object) -> object:
        return await resolve(reply)
    assert run_sync(flow(7)) == 7
    assert then(7, str) == "7" and asyncio.run(then(asyncio.sleep(0, 8), str)) == "8"
    with pytest.raises(TypeError, match="use the asyncio worker"):
        run_sync(flow(Suspends()))


# --- the scripts -----------------------------------------------------------------------

def test_lock_is_renewed_and_released_only_by_its_token(client: redis.Redis) -> None:
    scripts, lock = Scripts(client), lock_key(STREAM, "1-0")
    client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    assert scripts.acquire(STREAM, GROUP, [lock], "mine", 60_000) == ([True], 0)
    assert scripts.acquire(STREAM, GROUP, [lock], "theirs", 60_000) == ([False], 0)
    assert not scripts.renew(lock, "theirs", 120_000)
    assert client.pttl(lock) <= 60_000
    assert scripts.renew(lock, "mine", 120_000) and client.pttl(lock) > 60_000
    assert not scripts.release(lock, "theirs") and client.get(lock) == "mine"
    assert scripts.release(lock, "mine") and not client.exists(lock)


def test_locks_of_a_read_are_taken_and_freed_in_one_call_each(client: redis.Redis) -> None:
    """One call takes a read's locks (ours again counts: a retried call), one call
    acknowledges a group of finished tasks and frees only the locks still ours; both
    say how many entries the group has pending (the pel_depth gauge)."""
    scripts = Scripts(client)
    client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    ids = [client.xadd(STREAM, {"n": str(n)}) for n in range(3)]
    client.xreadgroup(GROUP, "c1", {STREAM: ">"})
    locks = [lock_key(STREAM, entry_id) for entry_id in ids]
    client.set(locks[1], "theirs")
    assert scripts.acquire(STREAM, GROUP, locks, "mine", 60_000) == ([True, False, True], 3)
    assert scripts.acquire(STREAM, GROUP, locks, "mine", 60_000) == ([True, False, True], 3)
    assert 0 < client.pttl(locks[0]) <= 60_000 and client.ttl(locks[1]) == -1
    assert scripts.ack(STREAM, GROUP, [(ids[0], locks[0], "mine"), (ids[1], locks[1], "mine")]) == (2, 1)
    assert not client.exists(locks[0]) and client.get(locks[1]) == "theirs" and client.exists(locks[2])
    assert [e["message_id"] for e in client.xpending_range(STREAM, GROUP, "-", "+", 10)] == [ids[2]]
    assert scripts.ack(STREAM, GROUP, [(ids[0], locks[0], "mine"), (ids[2], locks[2], "mine")]) == (1, 0)
    assert client.xpending(STREAM, GROUP)["pending"] == 0 and not client.exists(locks[2])


def read_one(client: redis.Redis, consumer: str = "c1") -> str:
    """Reads the group's next new entry (now pending for `consumer`); its ID."""
    [[_, [(entry_id, _)]]] = client.xreadgroup(GROUP, consumer, {STREAM: ">"}, count=1)
    return entry_id


def requeue(scripts: Scripts, entry_id: str, max_retries: int = 3, dlq: str = dlq_key(STREAM),
            token: str = "", prefix: str = "_"):
    return scripts.requeue(stream=STREAM, dlq=dlq, lock=lock_key(STREAM, entry_id),
                           error=error_key(STREAM, entry_id), group=GROUP, entry_id=entry_id,
                           prefix=prefix, max_retries=max_retries, reason="test reason", token=token)


def test_requeue_adds_nothing_when_xack_returns_0(client: redis.Redis) -> None:
    client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    client.xadd(STREAM, {"task": "a"})
    entry_id = read_one(client)
    assert client.xack(STREAM, GROUP, entry_id) == 1            # someone else handled it
    result = requeue(Scripts(client), entry_id)
    assert result.outcome == "handled" and result.new_id == ""
    assert client.xlen(STREAM) == 1 and not client.exists(dlq_key(STREAM))


def test_requeue_counts_retries_then_dead_letters(client: redis.Redis) -> None:
    scripts = Scripts(client)
    client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    original = client.xadd(STREAM, {"task": "a", "n": "1"})
    entry_id = read_one(client)
    first = requeue(scripts, entry_id, max_retries=1)
    assert first.outcome == "requeued"
    assert client.xrange(STREAM, first.new_id, first.new_id)[0][1] == {
        "task": "a", "n": "1", "_retry_count": "1", "_original_id": original, "_last_error": "test reason"}
    assert client.xpending(STREAM, GROUP)["pending"] == 0        # the old one is acknowledged

    again = read_one(client)
    client.set(error_key(STREAM, again), "ValueError: bad input")
    dead = requeue(scripts, again, max_retries=1)
    assert dead.outcome == "dead"
    assert client.xrange(dlq_key(STREAM))[0][1] == {
        "task": "a", "n": "1", "_retry_count": "2", "_original_id": original,
        "_last_error": "ValueError: bad input"}
    assert client.xlen(STREAM) == 2 and not client.exists(error_key(STREAM, again))


def test_requeue_skips_a_live_lock_but_frees_its_own(client: redis.Redis) -> None:
    scripts = Scripts(client)
    client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    client.xadd(STREAM, {"task": "a"})
    entry_id = read_one(client)
    scripts.acquire(STREAM, GROUP, [lock_key(STREAM, entry_id)], "owner", 60_000)
    assert requeue(scripts, entry_id).outcome == "alive"
    assert client.xpending(STREAM, GROUP)["pending"] == 1
    result = requeue(scripts, entry_id, token="owner", prefix="meta.")
    assert result.outcome == "requeued" and not client.exists(lock_key(STREAM, entry_id))
    assert client.xrange(STREAM, result.new_id, result.new_id)[0][1]["meta.retry_count"] == "1"


def test_past_max_retries_without_dlq_drops(client: redis.Redis) -> None:
    client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    client.xadd(STREAM, {"task": "a", "_retry_count": "3"})
    assert requeue(Scripts(client), read_one(client), dlq="").outcome == "dropped"
    assert client.xlen(STREAM) == 1 and client.xpending(STREAM, GROUP)["pending"] == 0


# --- notifications ---------------------------------------------------------------------

@pytest.mark.parametrize("backend", SERVERS, indirect=True)
def test_expired_events_are_turned_on(client: redis.Redis) -> None:
    client.config_set("notify-keyspace-events", "K$")
    assert ensure_expired_events(client)
    flags = client.config_get("notify-keyspace-events")["notify-keyspace-events"]
    assert {"E", "x", "K", "$"} <= set(flags)


def test_refused_config_says_what_to_set(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A server whose CONFIG is off (as managed services have it): the log says what to set."""
    refusing = servers.ORACLE_FLAGS + ("--rename-command", "CONFIG", "")
    with servers.RedisServer(refusing, workdir=tmp_path) as srv:
        c = srv.client(decode_responses=True)
        with caplog.at_level(logging.WARNING, logger="sluice.worker"):
            assert not ensure_expired_events(c)
        c.close()
    assert "set notify-keyspace-events to include 'Ex'" in caplog.text


def test_worker_in_a_thread_with_undecoded_replies(backend: Backend, mode: str, client: redis.Redis) -> None:
    """Stopped by `stop()` from another thread; a client without decode_responses gets bytes fields."""
    seen: list[Task] = []

    async def seen_async(task: Task) -> None:
        seen.append(task)
    config = WorkerConfig(STREAM, GROUP, "t1", **{k: FAST[k] for k in ("lock_ttl", "block")},
                          recovery=RecoveryConfig(**FAST["recovery"]))
    running = ThreadWorker(backend, mode, config, lambda _: seen.append if mode == "sync" else seen_async)
    entry_id = client.xadd(STREAM, {"task": "a"})
    wait_for(lambda: running.worker.stats.tasks_done == 1, "the task to be handled")
    running.stop()
    wait_for(lambda: not [t for t in threading.enumerate() if t.name.startswith("worker-")],
             "the worker's helper and handler threads to end")
    assert seen == [Task(entry_id, {b"task": b"a"}, 0, entry_id, None)]
    assert client.xpending(STREAM, GROUP)["pending"] == 0 and client.keys("lock:*") == []


# --- worker processes ------------------------------------------------------------------

# The fast path alone (the scan's MinIdleTime is far beyond the wait), then the scan alone.
ONLY_LISTENER = {"min_idle_time": 60.0, "reconciliation_interval": 60.0}
ONLY_SCAN = {"keyspace_listener": False}
TASKS = 240


def consumers_reading(client: redis.Redis) -> set[str]:
    """The consumers of the group that have read (none before the group exists)."""
    try:
        return {c["name"] for c in client.xinfo_consumers(STREAM, GROUP)}
    except redis.ResponseError:
        return set()


@pytest.mark.parametrize("backend", SERVERS, indirect=True)
@pytest.mark.parametrize("recovery", [ONLY_LISTENER, ONLY_SCAN], ids=["expiry-events", "scan"])
def test_kill_9_mid_task_loses_nothing(client: redis.Redis, workers, recovery: dict) -> None:
    """Workers killed with kill -9 while they hold tasks: every task still completes.
    The tasks last long enough (240 x 0.2 s over 12 slots: 4 s) that the workers started
    first cannot drain them all while the victims are still starting on a loaded machine."""
    add_tasks(client, TASKS, sleep=0.2)
    procs = {name: workers(name, recovery=recovery) for name in ("w1", "w2", "w3")}
    if recovery is ONLY_LISTENER:                   # no expiry may pass before all listen
        wait_for(lambda: client.pubsub_numsub(EXPIRED) == [(EXPIRED, 3)], "the workers' listeners")
    wait_for(lambda: {"w1", "w2"} <= consumers_reading(client), "the victims to read tasks")
    for victim in ("w1", "w2"):
        procs[victim].kill_holding_locks(client)
    workers("w4", recovery=recovery)                # a replacement, which scans on start
    wait_for(lambda: len(done(client)) == TASKS, "every task to complete", timeout=60)
    recovered = requeued_entries(client)
    print(f"\n{recovery}: done {len(done(client))}/{TASKS}, starts {client.xlen('starts')}, "
          f"requeued {len(recovered)}")
    assert recovered, "the killed workers' tasks were never requeued"
    assert all(n >= 1 for n in done(client).values())


@pytest.mark.parametrize("locked", [False, True], ids=["unlocked", "locked"])
def test_a_dead_consumers_entries_are_recovered(backend: Backend, client: redis.Redis, workers,
                                               locked: bool) -> None:
    """What a dead consumer leaves: entries read and never acknowledged, without locks (a
    worker killed between reading and locking: only the scan sees those) or under locks
    left to expire (the expiry events' case; the embedded engine publishes none, so there
    the scan recovers them too)."""
    add_tasks(client, 10)
    client.xgroup_create(STREAM, GROUP, id="0")
    [[_, held]] = client.xreadgroup(GROUP, "dead", {STREAM: ">"}, count=6)
    for entry_id, _ in held:
        if locked:
            Scripts(client).acquire(STREAM, GROUP, [lock_key(STREAM, entry_id)], "dead-token", 500)
    worker = workers("w1")
    wait_for(lambda: len(done(client)) == 10, "every task to complete")
    stats = stop_and_collect([worker])
    assert sorted(f["_original_id"] for f in requeued_entries(client)) == [entry_id for entry_id, _ in held]
    assert stats["recovery_scan_requeued"] + stats["recovery_keyspace_requeued"] == 6
    if backend.engine is not None:
        assert stats["recovery_keyspace_requeued"] == 0 and stats["recovery_scans"] >= 2


def test_slow_task_is_not_handed_to_a_second_worker(client: redis.Redis, workers) -> None:
    """The RFC's duplicate bug: a task running well past MinIdleTime whose lock is renewed
    must not be requeued by the other worker's scans."""
    client.xadd(STREAM, {"task": "slow", "sleep": 4.0})
    # A roomier lock than FAST's, so a busy machine delaying a heartbeat cannot lose it.
    slow = {"concurrency": 1, "lock_ttl": 1.0, "recovery": {"min_idle_time": 2.0}}
    procs = [workers("w1", **slow), workers("w2", **slow)]
    wait_for(lambda: client.xlen("starts") == 1, "the slow task to start")
    # Idle past MinIdleTime: XAUTOCLAIM-style recovery would take it now.
    wait_for(lambda: client.xpending_range(STREAM, GROUP, "-", "+", 10, idle=2500) != [],
             "the slow entry to idle past min_idle_time")
    wait_for(lambda: "slow" in done(client), "the slow task to finish")
    time.sleep(1.0)                                  # a scan cycle or two after it finished
    stats = stop_and_collect(procs)
    print(f"\nslow task: starts {starts(client)}, stats {dict(stats)}")
    assert client.xlen("starts") == 1, "the slow task ran twice"
    assert stats["recovery_scan_skipped_alive"] >= 1, "no scan saw the slow entry as a candidate"
    assert stats["locks_lost"] == 0 and stats["recovery_scan_requeued"] == 0
    assert requeued_entries(client) == [] and client.xpending(STREAM, GROUP)["pending"] == 0


def test_poison_task_ends_in_the_dlq(client: redis.Redis, workers) -> None:
    [poison] = [client.xadd(STREAM, {"task": "poison", "fail": 1})]
    add_tasks(client, 5)
    workers("w1", recovery={"max_retries": 2})
    wait_for(lambda: client.xlen(dlq_key(STREAM)) == 1, "the poison task to reach the DLQ")
    wait_for(lambda: len(done(client)) == 5, "the good tasks to complete")
    [(_, dead)] = client.xrange(dlq_key(STREAM))
    assert dead["task"] == "poison" and dead["_retry_count"] == "3" and dead["_original_id"] == poison
    assert dead["_last_error"] == "RuntimeError: boom on poison"
    assert Counter(s.split()[0] for s in starts(client))["poison"] == 3


def test_sigterm_finishes_quick_tasks_and_requeues_the_rest(client: redis.Redis, workers) -> None:
    client.xadd(STREAM, {"task": "quick", "sleep": 0.3})
    stuck = client.xadd(STREAM, {"task": "stuck", "sleep": 5})      # 10 x shutdown_timeout
    proc = workers("w1", recovery={"keyspace_listener": False})
    wait_for(lambda: client.xlen("starts") == 2, "both tasks to start")
    stats = stop_and_collect([proc])
    assert stats["tasks_done"] == 1 and stats["recovery_shutdown_requeued"] == 1
    assert done(client)["quick"] == 1
    [again] = requeued_entries(client)
    assert again["task"] == "stuck" and again["_original_id"] == stuck and again["_retry_count"] == "1"
    assert "shut down" in again["_last_error"]
    assert client.xpending(STREAM, GROUP)["pending"] == 0 and client.keys("lock:*") == []


@pytest.mark.parametrize("mode", ["sync"], indirect=True)
@pytest.mark.parametrize("backend", SERVERS, indirect=True)
def test_a_task_delivered_again_after_its_requeue_is_not_enqueued_twice(
        client: redis.Redis, backend: Backend, workers) -> None:
    """A failing task is requeued once (retry 1), then dead-lettered (retry 2); the worker
    is killed with kill -9 and the group moved back to 0 (as a PEL restored from an older
    copy would be), so a new worker gets the task and its retry copy again and requeues
    them again. Sluice's XADD IDMP (named by group, original ID and retry count) adds
    nothing the second time; redis-server 7.0, without IDMP, enqueues them again."""
    task = client.xadd(STREAM, {"task": "poison", "fail": 1})
    settings = {"recovery": {"max_retries": 1, "retry_backoff": "immediate"}}
    first = workers("w1", **settings)
    # and w1 to acknowledge the copy it dead-lettered: killed between the two, it would
    # leave that copy pending under its lock, which w2 must not run before the lock lapses
    wait_for(lambda: client.xlen(dlq_key(STREAM)) == 1 and client.xpending(STREAM, GROUP)["pending"] == 0,
             "the task to reach the DLQ")
    first.proc.kill()
    first.proc.wait()
    client.xgroup_setid(STREAM, GROUP, "0")
    second = workers("w2", **settings)
    # Sluice: the task and its copy run again and add nothing; redis-server: the task's
    # second copy runs too, and each copy ends in the DLQ
    runs, dead = (2, 1) if backend.name == "sluice" else (3, 3)
    wait_for(lambda: Counter(s.split()[1] for s in starts(client))["w2"] == runs
             and client.xlen(dlq_key(STREAM)) == dead and client.xpending(STREAM, GROUP)["pending"] == 0,
             "w2 to run them again")
    second.stop()
    copies = Counter((f["_original_id"], f["_retry_count"]) for key in (STREAM, dlq_key(STREAM))
                     for _, f in client.xrange(key) if "_retry_count" in f)
    assert copies == ({(task, "1"): 1, (task, "2"): 1} if backend.name == "sluice"
                      else {(task, "1"): 2, (task, "2"): 3})
    assert Counter(s.split()[1] for s in starts(client))["w2"] == runs
