"""`sluice-worker` (sluice/worker/cli.py) as a real process: a handler module from a
temporary directory processes tasks on a real sluice-server and a real Redis Cluster,
serves its metrics on /metrics, SIGTERM stops it with status 0, and every usage error
exits 2 with its reason."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.cluster import RedisCluster

import servers
from metrics_scrape import sample, scrape
from sluice.worker import RecoveryConfig, WorkerConfig
from redis_cluster import redis_cluster  # noqa: F401 - a fixture
from sluice.worker.cli import (EXIT_STOPPED, EXIT_UNREACHABLE, EXIT_USAGE, build_parser, config_from,
                                 setting_fields, shown_url)

STREAM, GROUP = "jobs", "cli"
# Handlers for the tests: each run records its task in the `done` stream of the server
# named by $DONE_PORT, as str fields unless the worker runs with --raw.
HANDLERS = textwrap.dedent("""
    import os, threading
    import redis
    _client = redis.Redis(port=int(os.environ["DONE_PORT"]))
    seen_types = set()

    def record(task):
        value = task.fields.get("n", task.fields.get(b"n"))
        _client.xadd("done", {"n": value, "type": type(value).__name__,
                              "retry": task.retry_count, "thread": threading.current_thread().name})

    _cluster = None

    def record_in_cluster(task):
        global _cluster
        if _cluster is None:
            from redis.cluster import RedisCluster
            _cluster = RedisCluster(host="127.0.0.1", port=int(os.environ["DONE_PORT"]))
        _cluster.xadd("{jobs}:done", {"n": task.fields["n"]})

    def fail(task):
        raise ValueError("always")

    def record_then_pause_writes(task):
        # The first run pauses its own server's writes as it returns: its ack cannot run.
        record(task)
        if task.retry_count == 0:
            redis.Redis(port=int(task.fields["port"])).execute_command("CLIENT", "PAUSE", "60000", "WRITE")

    not_callable = 42
""")
FAST = ["--lock-ttl", "0.5", "--block", "0.2", "--shutdown-timeout", "1", "--min-idle-time", "1",
        "--reconciliation-interval", "0.5"]
WAIT_S = 30.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A sluice-server (the library's own tests run each case on redis-server too)."""
    with servers.SluiceServer(["--save", "", "--appendonly", "no"], workdir=tmp_path_factory.mktemp("cli")) as srv:
        yield srv.port


@pytest.fixture
def client(server: int) -> Iterator[redis.Redis]:
    with redis.Redis(port=server, decode_responses=True) as c:
        c.flushall()
        yield c


@pytest.fixture
def handlers(tmp_path: Path) -> Path:
    """A directory holding the module `cli_handlers` (outside the checkout)."""
    directory = tmp_path / "app"
    directory.mkdir()
    (directory / "cli_handlers.py").write_text(HANDLERS)
    return directory


def sluice_worker(*args: str, cwd: Path, port: int = 0, **popen: object) -> subprocess.Popen:
    """`sluice-worker ARGS` as a process (run as `python -m`: the shared venv's console
    script is the main checkout's)."""
    return subprocess.Popen([sys.executable, "-m", "sluice.worker.cli", *args], cwd=cwd,
                            env=servers.checkout_env(DONE_PORT=str(port)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def url(port: int) -> str:
    return f"redis://127.0.0.1:{port}/0"


@pytest.mark.parametrize("raw", [False, True], ids=["decoded", "raw"])
def test_runs_a_handler_module_and_stops_cleanly_on_sigterm(client: redis.Redis, server: int,
                                                            handlers: Path, raw: bool) -> None:
    for n in range(50):
        client.xadd(STREAM, {"n": n})
    proc = sluice_worker("cli_handlers:record", "--stream", STREAM, "--group", GROUP, "--url", url(server),
                         "--concurrency", "3", *FAST, *(["--raw"] if raw else []), cwd=handlers, port=server)
    wait_for(lambda: client.xlen("done") == 50 or proc.poll() is not None, "50 tasks to be handled")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == EXIT_STOPPED, err
    done = [fields for _, fields in client.xrange("done")]
    assert sorted(int(f["n"]) for f in done) == list(range(50))
    assert {f["type"] for f in done} == {"bytes" if raw else "str"}
    assert len({f["thread"] for f in done}) <= 3
    assert client.xpending(STREAM, GROUP)["pending"] == 0
    assert f"consuming {STREAM} (group {GROUP})" in err and "tasks_done=50" in err, err


def test_failing_handler_goes_to_the_dlq_and_sigint_stops_too(client: redis.Redis, server: int,
                                                              handlers: Path, tmp_path: Path) -> None:
    """The handler's directory given with --path; max retries and the DLQ from flags."""
    client.xadd(STREAM, {"n": 1})
    proc = sluice_worker("cli_handlers:fail", "--stream", STREAM, "--group", GROUP, "--url", url(server),
                         "--path", str(handlers), "--max-retries", "1", "--dlq-stream", "{jobs}:dead",
                         "--consumer", "w-dlq", *FAST, cwd=tmp_path, port=server)
    wait_for(lambda: client.exists("{jobs}:dead") or proc.poll() is not None, "the task to be dead-lettered")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == EXIT_STOPPED, err
    [(_, dead)] = client.xrange("{jobs}:dead")
    assert dead["_retry_count"] == "2" and dead["_last_error"] == "ValueError: always"
    assert client.xinfo_consumers(STREAM, GROUP)[0]["name"] == "w-dlq"


def test_a_task_whose_ack_was_not_sent_when_its_worker_died_runs_again(
        client: redis.Redis, server: int, handlers: Path, tmp_path: Path) -> None:
    """kill -9 of a worker whose handler finished but whose acknowledgement did not
    reach the server (held back by CLIENT PAUSE WRITE on a redis-server): the entry
    stays pending under the dead worker's lock, which expires, and recovery requeues it:
    it runs again in another worker (allowed: its owner died)."""
    with servers.RedisServer(servers.ORACLE_FLAGS, workdir=tmp_path) as work:
        queue = redis.Redis(port=work.port, decode_responses=True)
        queue.xadd(STREAM, {"n": 1, "port": work.port})
        args = ("cli_handlers:record_then_pause_writes", "--stream", STREAM, "--group", GROUP,
                "--url", url(work.port), *FAST)
        first = sluice_worker(*args, "--consumer", "w-dies", cwd=handlers, port=server)
        try:
            wait_for(lambda: client.xlen("done") == 1 or first.poll() is not None, "the first run")
        finally:
            first.kill()
            first.communicate(timeout=WAIT_S)
        # The dead worker's acknowledgement, still waiting for the pause to end, goes with it.
        queue.client_kill_filter(_type="normal", skipme=True)
        queue.execute_command("CLIENT", "UNPAUSE")
        assert queue.xpending(STREAM, GROUP)["pending"] == 1
        second = sluice_worker(*args, "--consumer", "w-lives", cwd=handlers, port=server)
        try:
            wait_for(lambda: client.xlen("done") == 2 or second.poll() is not None, "the run after recovery")
            wait_for(lambda: queue.xpending(STREAM, GROUP)["pending"] == 0, "the second run's acknowledgement")
        finally:
            second.send_signal(signal.SIGTERM)
            _, err = second.communicate(timeout=WAIT_S)
        queue.close()
    assert second.returncode == EXIT_STOPPED, err
    assert [f["retry"] for _, f in client.xrange("done")] == ["0", "1"]


def test_metrics_port_serves_the_workers_metrics(client: redis.Redis, server: int, handlers: Path) -> None:
    for n in range(5):
        client.xadd(STREAM, {"n": n})
    port = servers.free_port()
    proc = sluice_worker("cli_handlers:record", "--stream", STREAM, "--group", GROUP, "--url", url(server),
                         "--consumer", "w-metrics", "--metrics-port", str(port), "--metrics-host", "127.0.0.1",
                         *FAST, cwd=handlers, port=server)
    labels = {"stream": STREAM, "group": GROUP, "consumer": "w-metrics"}

    def all_done() -> bool:
        try:
            return sample(scrape(port), "tasks_done_total", **labels) == 5
        except OSError:                             # not listening yet
            return proc.poll() is not None
    wait_for(all_done, "/metrics to count 5 tasks done")
    samples = scrape(port)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == EXIT_STOPPED, err
    assert client.xlen("done") == 5 and "tasks_done=5" in err, err
    assert f"serving Prometheus metrics on http://127.0.0.1:{port}/metrics" in err, err
    assert sample(samples, "handler_duration_seconds_count", **labels) == 5
    assert sample(samples, "recovery_scans_total", **labels) >= 1


def test_cluster_mode(redis_cluster: tuple[str, int], handlers: Path) -> None:
    """--cluster: a RedisCluster client on a real 3-master cluster."""
    host, port = redis_cluster
    cluster = RedisCluster(host=host, port=port, decode_responses=True)
    cluster.delete(STREAM, "{jobs}:done")
    for n in range(20):
        cluster.xadd(STREAM, {"n": n})
    proc = sluice_worker("cli_handlers:record_in_cluster", "--stream", STREAM, "--group", GROUP, "--cluster",
                         "--url", f"redis://{host}:{port}/0", *FAST, cwd=handlers, port=port)
    wait_for(lambda: cluster.exists("{jobs}:done") and cluster.xlen("{jobs}:done") == 20
             or proc.poll() is not None, "20 tasks to be handled")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=WAIT_S)
    cluster.close()
    assert proc.returncode == EXIT_STOPPED, err
    assert "tasks_done=20" in err, err


@pytest.mark.parametrize("args, message", [
    (["cli_handlers:record", "--lock-ttl", "20"], "min_idle_time (30.0 s) must be at least 2 x lock_ttl"),
    (["cli_handlers:record", "--concurrency", "0"], "concurrency must be a positive integer, got 0"),
    (["cli_handlers:record", "--concurrency", "two"], "argument --concurrency: invalid int value: 'two'"),
    (["cli_handlers:record", "--dlq-stream", "dead"], "does not share the hash slot"),
    (["cli_handlers"], "handler 'cli_handlers' is not MODULE:FUNCTION"),
    (["no_such_module:f"], "cannot import module 'no_such_module'"),
    (["cli_handlers:missing"], "module 'cli_handlers' has no 'missing'"),
    (["cli_handlers:not_callable"], "cli_handlers:not_callable is a int, not a callable"),
    (["cli_handlers:record", "--url", "http://x"], "Redis URL must specify one of the following schemes"),
    (["cli_handlers:record", "--url", "rediss://ann:pw@127.0.0.1:1/0", "--user", "bob"],
     "--user 'bob' differs from the URL's user 'ann': give it once"),
])
def test_usage_errors_exit_2_with_the_reason(handlers: Path, args: list, message: str) -> None:
    proc = sluice_worker(*args, "--stream", STREAM, "--group", GROUP, cwd=handlers)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == EXIT_USAGE, err
    assert err.startswith("usage: sluice-worker"), err
    [error] = [line for line in err.splitlines() if line.startswith("sluice-worker: error: ")]
    assert message in error


@pytest.mark.parametrize("cluster", [[], ["--cluster"]], ids=["single", "cluster"])
def test_unreachable_server_exits_3(handlers: Path, cluster: list) -> None:
    proc = sluice_worker("cli_handlers:record", "--stream", STREAM, "--group", GROUP,
                         "--url", url(servers.free_port()), *cluster, cwd=handlers)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == EXIT_UNREACHABLE and "cannot reach redis://127.0.0.1:" in err, err


def test_help_documents_the_exit_codes() -> None:
    text = build_parser().format_help()
    for code in ("0  stopped by SIGTERM or SIGINT", "2  usage error", "3  the server could not be reached"):
        assert code in text


def test_every_setting_has_a_flag_with_the_librarys_default() -> None:
    parse = build_parser().parse_args
    default = config_from(parse(["m:f", "--stream", "s", "--group", "g", "--consumer", "c"]))
    assert default == WorkerConfig("s", "g", "c")
    chosen = config_from(parse([
        "m:f", "--stream", "s", "--group", "g", "--consumer", "c", "--concurrency", "2", "--lock-ttl", "3",
        "--heartbeat-interval", "1", "--block", "0.5", "--shutdown-timeout", "0", "--reconciliation-interval",
        "7", "--min-idle-time", "8", "--batch-size", "9", "--max-retries", "0", "--dlq-stream", "",
        "--field-prefix", "meta.", "--scan-jitter", "0", "--no-keyspace-listener", "--metrics-port", "9108",
        "--metrics-host", "127.0.0.1"]))
    assert chosen == WorkerConfig("s", "g", "c", concurrency=2, lock_ttl=3, heartbeat_interval=1, block=0.5,
                                  shutdown_timeout=0, metrics_port=9108, metrics_host="127.0.0.1",
                                  recovery=RecoveryConfig(
                                      reconciliation_interval=7, min_idle_time=8, batch_size=9, max_retries=0,
                                      dlq_stream="", field_prefix="meta.", scan_jitter=0, keyspace_listener=False))
    # A setting added to the library later gets a flag (and this test names it).
    flags = {a.dest for a in build_parser()._actions}
    assert {f.name for _, f in setting_fields()} <= flags


def test_the_log_never_shows_a_password() -> None:
    assert shown_url("redis://:s3cret@host:6380/0") == "redis://:***@host:6380/0"
    assert shown_url("rediss://app:s3cret@host/1") == "rediss://app:***@host/1"
    assert shown_url("redis://host:6379") == "redis://host:6379"
