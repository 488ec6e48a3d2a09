"""Prometheus monitoring through Debian's prometheus-redis-exporter (oliver006/redis_exporter,
installed by `make test`): run against sluice-server and redis-server 7.0 holding the same
data, the stream, client, key and command metrics are the same, and the metric names
Sluice lacks are exactly the ones listed here, each with the reason."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator

import pytest
import redis

from servers import RedisServer, SluiceServer, free_port, needs_redis

EXPORTER = "prometheus-redis-exporter"
Metrics = dict[str, dict[str, float]]          # name -> labels -> value

# What the exporter reads from INFO (or a command) that Sluice does not give, by reason.
MISSING = {
    "jemalloc's allocator (INFO memory)": {
        "redis_allocator_active_bytes", "redis_allocator_allocated_bytes", "redis_allocator_frag_bytes",
        "redis_allocator_frag_ratio", "redis_allocator_resident_bytes", "redis_allocator_rss_bytes",
        "redis_allocator_rss_ratio"},
    "fork-based saving (copy-on-write sizes, fork time)": {
        "redis_aof_last_cow_size_bytes", "redis_rdb_last_cow_size_bytes", "redis_latest_fork_seconds"},
    "I/O threads (none: one event loop)": {"redis_config_io_threads"},
    "INFO fields not counted yet: keyspace hits/misses, expiry cycle": {
        "redis_keyspace_hits_total", "redis_keyspace_misses_total", "redis_expired_stale_percentage",
        "redis_expired_time_cap_reached_total", "redis_dump_payload_sanitizations",
        "redis_mem_clients_normal"},
}
# The exporter's own complaints about commands Sluice lacks (it logs them and goes on).
EXPECTED_ERRORS: list = []


@pytest.fixture(scope="module")
def exporter() -> str:
    binary = shutil.which(EXPORTER)
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {EXPORTER} is not installed (`make exporter`)", pytrace=False)
        pytest.skip(reason=f"{EXPORTER} is not installed; `make test` installs it")
    return binary


def same_data(client: redis.Redis) -> None:
    """A stream with a group that has read part of it, and keys of other types."""
    client.flushall()
    for n in range(50):
        client.xadd("orders", {"n": n})
    client.xgroup_create("orders", "billing", "0")
    client.xreadgroup("billing", "c1", {"orders": ">"}, count=20)
    client.set("k", "v")
    client.lpush("l", 1, 2)
    client.hset("h", "f", 1)
    client.get("k")


def scrape(binary: str, port: int) -> tuple[Metrics, list[str]]:
    """One /metrics page of an exporter run against the server on `port`, parsed, and
    the error lines of its log."""
    web = free_port()
    proc = subprocess.Popen([binary, "-redis.addr", f"redis://127.0.0.1:{port}",
                             "-web.listen-address", f"127.0.0.1:{web}", "-check-streams", "db0=orders",
                             "-check-keys", "db0=k"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{web}/metrics", timeout=10).read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "the exporter did not answer"
                time.sleep(0.1)
    finally:
        proc.terminate()
        log = proc.communicate(timeout=10)[0]
    metrics: Metrics = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, labels, value = re.match(r"([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)", line).groups()
            metrics.setdefault(name, {})[labels or ""] = float(value)
    return metrics, [line for line in log.splitlines() if "level=error" in line]


@pytest.fixture(scope="module")
def scraped(exporter: str) -> Iterator[dict[str, tuple[Metrics, list[str]]]]:
    with SluiceServer(["--save", ""], loglevel="warning") as sluice, RedisServer() as oracle:
        pages = {}
        for name, port in (("sluice", sluice.port), ("redis", oracle.port)):
            client = redis.Redis(port=port)
            same_data(client)
            pages[name] = scrape(exporter, port)
            client.close()
        yield pages


@needs_redis
def test_the_stream_key_and_client_metrics_agree(scraped) -> None:  # noqa: ANN001
    (ours, _), (theirs, _) = scraped["sluice"], scraped["redis"]
    for name in ("redis_up", "redis_stream_length", "redis_stream_groups", "redis_stream_group_messages_pending",
                 "redis_stream_group_consumers", "redis_stream_group_consumer_messages_pending",
                 "redis_stream_radix_tree_keys",
                 "redis_key_size", "redis_db_keys", "redis_connected_clients", "redis_blocked_clients"):
        assert ours.get(name) == theirs.get(name) and ours.get(name), name
    assert ours["redis_stream_length"] == {'{db="db0",stream="orders"}': 50.0}
    assert ours["redis_stream_group_messages_pending"] == {'{db="db0",group="billing",stream="orders"}': 20.0}
    calls = "redis_commands_total"
    assert ours[calls]['{cmd="xadd"}'] == theirs[calls]['{cmd="xadd"}'] == 50
    assert ours["redis_memory_used_bytes"][""] > 0 and ours["redis_uptime_in_seconds"][""] >= 0
    # XINFO STREAM's radix-tree-nodes counts Sluice's own tree (1 node here, Redis's rax 2)
    assert ours["redis_stream_radix_tree_nodes"] == {'{db="db0",stream="orders"}': 1.0}


@needs_redis
def test_the_metric_names_differ_only_where_listed(scraped) -> None:  # noqa: ANN001
    (ours, errors), (theirs, oracle_errors) = scraped["sluice"], scraped["redis"]
    assert sorted(set(theirs) - set(ours)) == sorted(set().union(*MISSING.values()))
    assert sorted(set(ours) - set(theirs)) == []
    assert oracle_errors == []
    assert len(errors) == len(EXPECTED_ERRORS) and all(
        expected in line for expected, line in zip(EXPECTED_ERRORS, errors)), errors
