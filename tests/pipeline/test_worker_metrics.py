"""The worker's Prometheus metrics (sluice.worker.metrics) scraped from its /metrics
endpoint, registries shared and not, and a worker riding out a kill -9 of its server;
each case for the sync Worker and the AsyncWorker."""
from __future__ import annotations

import asyncio
import logging
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from functools import partial
from typing import Callable, Optional

import pytest
import redis
import redis.asyncio
import redis.asyncio.retry
from prometheus_client import CollectorRegistry, generate_latest

import servers
from metrics_scrape import sample, scrape
from sluice.worker import AsyncWorker, ConfigError, RecoveryConfig, Task, Worker, WorkerConfig, dlq_key
from sluice.worker.background import stopped_within
from sluice.worker.flows import run_sync
from sluice.worker.reconnect import until_connected
from worker_support import WAIT_S, wait_for
from worker_thread import WorkerThread

STREAM, GROUP = "jobs", "crew"


def config(consumer: str, **overrides: object) -> WorkerConfig:
    """Fast settings: a lock lives 0.5 s, the scan runs every 0.3 s."""
    settings = {"lock_ttl": 0.5, "block": 0.2, "shutdown_timeout": 0.5,
                "recovery": RecoveryConfig(reconciliation_interval=0.3, min_idle_time=1.0, max_retries=0),
                **overrides}
    return WorkerConfig(STREAM, GROUP, consumer, **settings)


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    """Which worker: Worker on redis.Redis, or AsyncWorker on redis.asyncio.Redis."""
    return request.param


def make_worker(mode: str, port: int, config: WorkerConfig, handler: Callable[[Task], None],
                registry: Optional[CollectorRegistry] = None) -> Worker | AsyncWorker:
    """A worker of `mode` with a client of its own; the AsyncWorker runs the (blocking)
    handler in a thread."""
    if mode == "sync":
        return Worker(redis.Redis(port=port, decode_responses=True), config, handler, registry=registry)

    async def in_thread(task: Task) -> None:
        await asyncio.to_thread(handler, task)
    return AsyncWorker(redis.asyncio.Redis(port=port, decode_responses=True), config, in_thread,
                       registry=registry)


def handle(task: Task) -> None:
    time.sleep(float(task.fields.get("sleep", 0)))
    if task.fields.get("fail"):
        raise RuntimeError("poison")


@pytest.fixture
def sluice(tmp_path: Path) -> Iterator[servers.SluiceServer]:
    """A sluice-server that fsyncs every write, so a kill -9 loses nothing acknowledged."""
    with servers.SluiceServer(["--appendonly", "yes", "--appendfsync", "always"], workdir=tmp_path) as srv:
        yield srv


@pytest.fixture
def client(sluice: servers.SluiceServer) -> Iterator[redis.Redis]:
    c = redis.Redis(port=sluice.port, decode_responses=True)
    yield c
    c.close()


def test_metrics_endpoint_serves_what_the_stats_counted(sluice: servers.SluiceServer, client: redis.Redis,
                                                        mode: str) -> None:
    for n in range(3):
        client.xadd(STREAM, {"n": n})
    client.xadd(STREAM, {"n": "poison", "fail": 1})
    labels = {"stream": STREAM, "group": GROUP, "consumer": "m1"}
    worker = make_worker(mode, sluice.port, config("m1", metrics_port=0, metrics_host="127.0.0.1"), handle)
    with WorkerThread(worker):
        wait_for(lambda: worker.metrics_port is not None, "the endpoint")
        wait_for(lambda: client.exists(dlq_key(STREAM)) and worker.stats.tasks_done == 3,
                 "3 tasks done and the poison one in the DLQ")
        wait_for(lambda: client.xpending(STREAM, GROUP)["pending"] == 0, "nothing pending")
        scans = worker.stats.recovery_scans
        wait_for(lambda: worker.stats.recovery_scans > scans, "a scan after the queue emptied")
        stats = worker.stats.snapshot()
        samples = scrape(worker.metrics_port)
    assert worker.metrics_port is None              # closed with run
    print(f"\nstats {stats}")
    for name in ("tasks_done", "tasks_failed", "recovery_keyspace_requeued", "recovery_scan_requeued",
                 "recovery_dlq", "recovery_duplicate_ack", "recovery_scan_skipped_alive", "locks_lost"):
        assert sample(samples, f"{name}_total", **labels) == stats[name], name
    assert (stats["tasks_done"], stats["tasks_failed"], stats["recovery_dlq"]) == (3, 1, 1)
    assert sample(samples, "recovery_dlq_total", **labels) == client.xlen(dlq_key(STREAM))
    assert sample(samples, "handler_duration_seconds_count", **labels) == 4
    assert sample(samples, "recovery_scan_duration_seconds_count", **labels) == \
        sample(samples, "recovery_scans_total", **labels) >= 1
    assert sample(samples, "pel_depth", stream=STREAM, group=GROUP) == 0


def test_pel_depth_follows_reads_and_acknowledgements(sluice: servers.SluiceServer, client: redis.Redis,
                                                      mode: str) -> None:
    """The gauge is the group's pending count as of the last read, acknowledgement or
    scan: with scans far apart it shows the tasks in flight, then none."""
    release = threading.Event()

    def held(task: Task) -> None:
        release.wait(WAIT_S)

    recovery = RecoveryConfig(reconciliation_interval=3600, min_idle_time=7200, max_retries=0)
    worker = make_worker(mode, sluice.port, config("p1", recovery=recovery), held)
    with WorkerThread(worker):
        wait_for(lambda: worker.stats.recovery_scans == 1, "the start-up scan")
        for n in range(3):
            client.xadd(STREAM, {"n": n})
        wait_for(lambda: worker.stats.pel_depth == 3, "pel_depth 3 while the tasks run")
        release.set()
        wait_for(lambda: worker.stats.tasks_done == 3, "3 tasks done")
        wait_for(lambda: worker.stats.pel_depth == 0, "pel_depth 0 once they are acknowledged")
        assert worker.stats.recovery_scans == 1


def test_group_lag_is_what_the_scan_saw_undelivered(sluice: servers.SluiceServer, client: redis.Redis,
                                                    mode: str) -> None:
    """One handler at a time, held: of 5 entries 1 is delivered, the scan sees a lag of 4
    (XINFO GROUPS), and 0 once all ran; /metrics serves it per stream and group."""
    release = threading.Event()

    def held(task: Task) -> None:
        release.wait(WAIT_S)

    worker = make_worker(mode, sluice.port, config("l1", concurrency=1, metrics_port=0, metrics_host="127.0.0.1"), held)
    with WorkerThread(worker):
        wait_for(lambda: worker.stats.recovery_scans >= 1, "the start-up scan")
        for n in range(5):
            client.xadd(STREAM, {"n": n})
        wait_for(lambda: worker.stats.group_lag == 4, "a lag of 4 while one task is held")
        assert sample(scrape(worker.metrics_port), "group_lag", stream=STREAM, group=GROUP) == 4
        release.set()
        wait_for(lambda: worker.stats.tasks_done == 5 and worker.stats.group_lag == 0, "lag 0 once all ran")


def test_scans_remove_idle_consumers_with_nothing_pending(sluice: servers.SluiceServer,
                                                          client: redis.Redis, mode: str) -> None:
    """A consumer that has nothing pending and read nothing for idle_consumer_timeout goes
    (XGROUP DELCONSUMER); one with pending entries stays, whatever its idle time, and so
    does the scanning worker itself."""
    client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    client.xgroup_createconsumer(STREAM, GROUP, "ghost")
    client.xadd(STREAM, {"n": 1})
    client.xreadgroup(GROUP, "holder", {STREAM: ">"})
    time.sleep(0.3)
    recovery = RecoveryConfig(reconciliation_interval=0.3, min_idle_time=3600, max_retries=0,
                              idle_consumer_timeout=0.2)
    worker = make_worker(mode, sluice.port, config("w1", recovery=recovery), handle)
    with WorkerThread(worker):
        wait_for(lambda: worker.stats.consumers_removed == 1, "the ghost removed")
        wait_for(lambda: worker.stats.recovery_scans >= 3, "more scans")
    names = {c["name"] for c in client.xinfo_consumers(STREAM, GROUP)}
    assert names == {"holder", "w1"} and worker.stats.consumers_removed == 1


def attempts_recorder(fail_times: int) -> tuple[list, Callable[[Task], None]]:
    """A handler failing the first `fail_times` attempts at a task; the monotonic time
    and retry count of each attempt."""
    seen: list = []

    def handler(task: Task) -> None:
        seen.append((time.monotonic(), task.retry_count))
        if task.retry_count < fail_times:
            raise RuntimeError(f"attempt {task.retry_count}")
    return seen, handler


@pytest.mark.parametrize("backoff,delay,expected_gaps", [("exponential", 0.3, (0.3, 0.6)),
                                                         ("fixed", 0.4, (0.4, 0.4)),
                                                         ("immediate", 0.3, (0.0, 0.0))])
def test_a_failed_task_is_retried_after_its_backoff(sluice: servers.SluiceServer, client: redis.Redis,
                                                    mode: str, backoff: str, delay: float,
                                                    expected_gaps: tuple) -> None:
    """Retries come after the backoff's delay, not after the lock's expiry (lock_ttl 5 s
    here): the worker keeps the lock and requeues the entry itself."""
    seen, handler = attempts_recorder(fail_times=2)
    recovery = RecoveryConfig(reconciliation_interval=3600, min_idle_time=3600, max_retries=5,
                              retry_backoff=backoff, retry_delay=delay, retry_delay_max=10)
    worker = make_worker(mode, sluice.port, config("r1", lock_ttl=5.0, recovery=recovery), handler)
    client.xadd(STREAM, {"n": 1})
    with WorkerThread(worker):
        wait_for(lambda: worker.stats.tasks_done == 1, "the third attempt to succeed")
    assert [count for _, count in seen] == [0, 1, 2]
    gaps = [later[0] - earlier[0] for earlier, later in zip(seen, seen[1:])]
    for gap, expected in zip(gaps, expected_gaps):
        assert expected <= gap < expected + 2.0, gaps
    assert (worker.stats.tasks_failed, worker.stats.tasks_retried) == (2, 2)
    assert worker.stats.recovery_keyspace_requeued == worker.stats.recovery_scan_requeued == 0
    assert client.xpending(STREAM, GROUP)["pending"] == 0


def test_retries_still_waiting_are_requeued_at_shutdown(sluice: servers.SluiceServer, client: redis.Redis,
                                                        mode: str) -> None:
    seen, handler = attempts_recorder(fail_times=1)
    recovery = RecoveryConfig(reconciliation_interval=3600, min_idle_time=3600, max_retries=5,
                              retry_backoff="fixed", retry_delay=600)
    worker = make_worker(mode, sluice.port, config("r1", lock_ttl=5.0, recovery=recovery), handler)
    first = client.xadd(STREAM, {"n": 1})
    with WorkerThread(worker):
        wait_for(lambda: worker.stats.tasks_failed == 1, "the first attempt to fail")
    assert worker.stats.tasks_retried == 1 and len(seen) == 1
    [(_, fields)] = client.xrange(STREAM, "(" + first, "+")
    assert fields["_retry_count"] == "1" and fields["_original_id"] == first
    assert fields["_last_error"] == "RuntimeError: attempt 0"
    assert client.xpending(STREAM, GROUP)["pending"] == 0


def test_retry_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="retry_backoff must be one of immediate, fixed"):
        RecoveryConfig(retry_backoff="linear")
    with pytest.raises(ConfigError, match="retry_delay_max must be at least retry_delay"):
        RecoveryConfig(retry_delay=5, retry_delay_max=1)
    assert RecoveryConfig(retry_backoff="fixed", retry_delay=600).retry_delay == 600


def test_workers_in_one_process_keep_their_series_apart(sluice: servers.SluiceServer, client: redis.Redis,
                                                        mode: str) -> None:
    """Own registries (the default) do not clash; a shared one holds one series per consumer."""
    for n in range(4):
        client.xadd(STREAM, {"n": n})
    alone = [make_worker(mode, sluice.port, config("same"), handle) for _ in range(2)]
    assert alone[0].metrics.registry is not alone[1].metrics.registry
    shared = CollectorRegistry()
    pair = [make_worker(mode, sluice.port, config(name), handle, registry=shared) for name in ("s1", "s2")]
    with WorkerThread(pair[0]), WorkerThread(pair[1]):
        wait_for(lambda: pair[0].stats.tasks_done + pair[1].stats.tasks_done == 4, "4 tasks done")
    text = generate_latest(shared).decode()
    for worker in pair:
        line = f'tasks_done_total{{consumer="{worker.config.consumer}",group="{GROUP}",stream="{STREAM}"}}'
        assert f"{line} {float(worker.stats.tasks_done)}" in text


def test_metrics_port_is_checked() -> None:
    with pytest.raises(ConfigError, match="metrics_port must be a port number"):
        WorkerConfig(STREAM, GROUP, "c", metrics_port=70000)


def test_in_flight_task_outlives_a_kill_9_of_the_server(sluice: servers.SluiceServer, client: redis.Redis,
                                                        mode: str) -> None:
    """The handler finishes while the server is down: its acknowledgement waits for the
    restart, so the task runs once; the worker reads on afterwards."""
    started, finished = threading.Event(), threading.Event()

    def slow(task: Task) -> None:
        if task.fields["n"] == "first":
            started.set()
            finished.wait(WAIT_S)

    worker = make_worker(mode, sluice.port, config("k1", lock_ttl=10.0, recovery=RecoveryConfig(
        reconciliation_interval=1.0, min_idle_time=20.0)), slow)
    with WorkerThread(worker):
        client.xadd(STREAM, {"n": "first"})
        assert started.wait(WAIT_S)
        sluice.stop(signal.SIGKILL)
        finished.set()                              # its acknowledgement now fails, and is retried
        time.sleep(0.5)
        assert worker.stats.tasks_done == 0
        sluice.start()
        wait_for(lambda: worker.stats.tasks_done == 1, "the acknowledgement after the restart")
        # The restarted server forgot the CONFIG SET; the listener sets it again.
        wait_for(lambda: "x" in client.config_get("notify-keyspace-events")["notify-keyspace-events"],
                 "expired-key events to be on again")
        client.xadd(STREAM, {"n": "second"})
        wait_for(lambda: worker.stats.tasks_done == 2, "a task added after the restart")
    assert client.xpending(STREAM, GROUP)["pending"] == 0
    assert worker.stats.snapshot()["recovery_keyspace_requeued"] == 0
    assert client.xlen(STREAM) == 2                 # nothing was requeued


def test_a_step_waits_out_a_server_restart(sluice: servers.SluiceServer, mode: str,
                                           caplog: pytest.LogCaptureFixture) -> None:
    """reconnect.until_connected, with redis-py's own retries off: a call is retried until
    the restarted server answers; once its pause says to give up, the connection error."""
    sluice.stop(signal.SIGKILL)
    if mode == "sync":
        client = redis.Redis(port=sluice.port, retry=redis.retry.Retry(redis.backoff.NoBackoff(), 0))

        def ping(give_up: bool) -> bool:
            pause = (lambda seconds: True) if give_up else threading.Event().wait
            return run_sync(until_connected(client.ping, "pinging", pause))
    else:
        async def ping_async(give_up: bool) -> bool:
            aclient = redis.asyncio.Redis(port=sluice.port, retry=redis.asyncio.retry.Retry(
                redis.backoff.NoBackoff(), 0))
            pause = (lambda seconds: True) if give_up else partial(stopped_within, asyncio.Event())
            try:
                return await until_connected(aclient.ping, "pinging", pause)
            finally:
                await aclient.aclose()

        def ping(give_up: bool) -> bool:
            return asyncio.run(ping_async(give_up))
    with pytest.raises(redis.ConnectionError):
        ping(give_up=True)
    caplog.clear()
    restart = threading.Timer(0.5, sluice.start)
    restart.start()
    with caplog.at_level(logging.WARNING, logger="sluice.worker"):
        assert ping(give_up=False)
    restart.join()
    assert caplog.text.count("pinging: the server is unreachable, retrying until it is back") == 1
