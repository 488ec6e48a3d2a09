"""Fixtures for the differential suite: a throw-away redis-server oracle and a fresh Sluice engine."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from differential import RedisOracle

REDIS_MISSING_REASON = ("redis-server (the differential oracle) is not installed; "
                        "`make test` installs it")
STARTUP_TIMEOUT_S = 10.0
START_ATTEMPTS = 3


def _redis_server_binary() -> str:
    """Path of redis-server; fail loudly in CI (the oracle is mandatory there), skip elsewhere."""
    binary = shutil.which("redis-server")
    if binary:
        return binary
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but redis-server is not installed: the differential oracle is required "
                    "in CI (install it with `make oracle` or apt-get install redis-server)", pytrace=False)
    pytest.skip(reason=REDIS_MISSING_REASON)


def _free_port() -> int:
    """A loopback port that was free a moment ago (the kernel picks it when binding port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers_ping(port: int) -> bool:
    """True once the server accepts a connection and replies PONG."""
    try:
        oracle = RedisOracle("127.0.0.1", port)
        try:
            return oracle.execute("PING") == b"PONG"
        finally:
            oracle.close()
    except Exception:  # noqa: BLE001 - any failure just means "not up yet"
        return False


def _spawn(binary: str, workdir: Path, port: int) -> subprocess.Popen[bytes]:
    """Start redis-server with no persistence, TCP on loopback only, no unix socket."""
    with open(workdir / f"redis-{port}.log", "wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(workdir), "--daemonize", "no", "--protected-mode", "yes",
             "--loglevel", "warning"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )


def _wait_until_ready(proc: subprocess.Popen[bytes], port: int) -> bool:
    """Poll PING until it answers, the process dies, or the timeout passes."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if _answers_ping(port):
            return True
        time.sleep(0.05)
    return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate our own child process, escalating to kill if it does not exit."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _start_redis(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start a server, retrying with another port if the chosen one was taken in the meantime."""
    binary = _redis_server_binary()
    for _ in range(START_ATTEMPTS):
        port = _free_port()
        proc = _spawn(binary, workdir, port)
        if _wait_until_ready(proc, port):
            return proc, port
        _stop(proc)
    log_tail = "\n".join(p.read_text(errors="replace")[-2000:] for p in workdir.glob("redis-*.log"))
    pytest.fail(f"redis-server did not answer PING after {START_ATTEMPTS} attempts:\n{log_tail}",
                pytrace=False)


@pytest.fixture
def redis_server_binary() -> str:
    """For tests that start redis-server their own way: its path (a failure in CI when
    it is missing, a skip elsewhere)."""
    return _redis_server_binary()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A real redis-server (the oracle) for the whole session, as (host, port)."""
    proc, port = _start_redis(tmp_path_factory.mktemp("redis-oracle"))
    try:
        yield "127.0.0.1", port
    finally:
        _stop(proc)


@pytest.fixture(scope="session")
def second_redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """An independent second redis-server, used to validate the runner without the engine."""
    proc, port = _start_redis(tmp_path_factory.mktemp("redis-oracle-2"))
    try:
        yield "127.0.0.1", port
    finally:
        _stop(proc)


def _flushed_oracle(address: tuple[str, int]) -> Iterator[RedisOracle]:
    """A fresh connection to an empty server, closed afterwards."""
    oracle = RedisOracle(*address)
    oracle.execute("FLUSHALL")
    try:
        yield oracle
    finally:
        oracle.close()


@pytest.fixture
def oracle(redis_server: tuple[str, int]) -> Iterator[RedisOracle]:
    """A raw connection to the oracle, FLUSHALLed before the test."""
    yield from _flushed_oracle(redis_server)


@pytest.fixture
def second_oracle(second_redis_server: tuple[str, int]) -> Iterator[RedisOracle]:
    """A raw, flushed connection to the second oracle."""
    yield from _flushed_oracle(second_redis_server)


@pytest.fixture(scope="session")
def preloaded_library(tmp_path_factory: pytest.TempPathFactory) -> str:
    """tests/preloaded_calls.c compiled, for servers run with LD_PRELOAD: failing
    calls on demand and power cuts (see tests/preloaded.py)."""
    import preloaded  # noqa: PLC0415

    return preloaded.build(tmp_path_factory.mktemp("preloaded"))


@pytest.fixture
def engine():  # noqa: ANN201 - the engine's type is not importable at collection time
    """A fresh Sluice engine; imported here so the suite collects before the engine exists."""
    from engine import Engine  # noqa: PLC0415

    return Engine()


@pytest.fixture
def redis_data_dir(oracle: RedisOracle, tmp_path: Path) -> Path:
    """A copy of what redis-server writes, the stream `s` (1-1 f v) in each file:
    `dump.rdb` (SAVE), `appendonlydir/` whose base is RDB (BGREWRITEAOF with
    aof-use-rdb-preamble yes) and `resp/appendonlydir/` whose base is RESP commands
    (the same with aof-use-rdb-preamble no)."""
    source = Path(oracle.execute("CONFIG", "GET", "dir")[1].decode())
    copy = tmp_path / "redis-data"

    def rewrite_aof(preamble: str, into: Path) -> None:
        oracle.execute("CONFIG", "SET", "aof-use-rdb-preamble", preamble)
        oracle.execute("BGREWRITEAOF")
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while b"aof_rewrite_in_progress:0" not in oracle.execute("INFO", "persistence") \
                or b"aof_rewrite_scheduled:0" not in oracle.execute("INFO", "persistence"):
            assert time.monotonic() < deadline, "redis-server's BGREWRITEAOF did not finish"
            time.sleep(0.02)
        shutil.copytree(source / "appendonlydir", into / "appendonlydir")

    oracle.execute("XADD", "s", "1-1", "f", "v")
    oracle.execute("SAVE")
    copy.mkdir()
    shutil.copy(source / oracle.execute("CONFIG", "GET", "dbfilename")[1].decode(),
                copy / "dump.rdb")
    try:
        rewrite_aof("no", copy / "resp")
    finally:
        rewrite_aof("yes", copy)       # the oracle's default, put back
    return copy


@pytest.fixture(scope="session")
def spark():  # noqa: ANN201 - pyspark is imported lazily, so the suite collects without it
    """One local Spark (2 cores, no UI, WARN logs) for the session, with every Sluice
    format registered, started as the example pipeline and the benchmarks start it."""
    try:
        import pyspark  # noqa: F401, PLC0415
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but pyspark is not installed: `make test` installs the spark extra",
                        pytrace=False)
        pytest.skip(reason="pyspark is not installed; `make test` installs the spark extra")
    if shutil.which("java") is None:
        pytest.fail("Spark needs Java 17 and no java is on the PATH; `make test` installs it",
                    pytrace=False)
    from pipeline.spark.local import local_spark  # noqa: PLC0415

    session = local_spark("sluice-tests", shuffle_partitions=4)
    try:
        yield session
    finally:
        session.stop()
