"""Fixtures for the differential suite: a throw-away redis-server oracle and a fresh Sluice engine."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import servers
from differential import RedisOracle


@pytest.fixture(scope="session", autouse=True)
def _server_dirs(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Servers started without a workdir keep it (and their log) in this run's tmp tree."""
    servers.tmp_path_factory = tmp_path_factory


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """A failed test's report shows the log tails of the servers that ran during it."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for name, tail in servers.servers_seen_since(call.start):
            report.sections.append((f"log of {name}", tail))


# Markers (registered in pyproject.toml): each test gets its layer's, by its folder,
# and `slow` in the layers whose tests start servers and processes; the long tests of
# the other layers carry @pytest.mark.slow themselves. `pytest -m "not slow"` is the
# quick run.
LAYERS = ("core", "resp", "formats", "commands", "api", "persist", "scripting", "server", "pipeline")
SLOW_LAYERS = ("persist", "scripting", "server", "pipeline")
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list) -> None:
    for item in items:
        parts = item.path.relative_to(TESTS).parts
        layer = parts[0] if len(parts) > 1 and parts[0] in LAYERS else None
        if layer is not None:
            item.add_marker(layer)
        if layer in SLOW_LAYERS:
            item.add_marker("slow")


@pytest.fixture
def redis_server_binary() -> str:
    """redis-server's path, for tests that need the oracle (a failure in CI when it is
    missing, a skip elsewhere)."""
    return servers.redis_server_binary()


def _oracle(name: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    with servers.RedisServer(servers.ORACLE_FLAGS, workdir=tmp_path_factory.mktemp(name)) as srv:
        yield "127.0.0.1", srv.port


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A real redis-server (the oracle) for the whole session, as (host, port)."""
    yield from _oracle("redis-oracle", tmp_path_factory)


@pytest.fixture(scope="session")
def second_redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """An independent second redis-server, used to validate the runner without the engine."""
    yield from _oracle("redis-oracle-2", tmp_path_factory)


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
        deadline = time.monotonic() + servers.READY_TIMEOUT_S
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
    from sluice.spark.local import local_spark  # noqa: PLC0415

    session = local_spark("sluice-tests", shuffle_partitions=4)
    try:
        yield session
    finally:
        session.stop()
