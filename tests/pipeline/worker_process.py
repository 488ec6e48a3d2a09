"""A worker process for tests/pipeline/test_worker.py and test_worker_cluster.py, run as
`python tests/pipeline/worker_process.py PORT CONSUMER MODE CONFIG_JSON`, MODE being
`sync` (Worker on redis.Redis) or `async` (AsyncWorker on redis.asyncio.Redis); with
"cluster": true in the config the port is one node of a Redis Cluster, and the client
the cluster client of that kind.

Its handler records every start (`starts`: "task consumer") and every completion
(`done`: task -> count), sleeps the entry's `sleep` seconds and raises when the entry
has `fail`. On a clean exit it prints the worker's stats as JSON."""
from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from functools import partial
from typing import Any, Callable

import redis
import redis.asyncio
import redis.asyncio.cluster
from redis.cluster import RedisCluster

from sluice.worker import AsyncWorker, RecoveryConfig, Task, Worker, WorkerConfig
from sluice.worker.flows import resolve, run_sync


async def record_and_run(client: Any, consumer: str, sleep: Callable[[float], Any], task: Task) -> None:
    """The test handler, for a sync or an asyncio client (see sluice/worker/flows.py)."""
    await resolve(client.xadd("starts", {"task": task.fields["task"], "consumer": consumer}))
    await resolve(sleep(float(task.fields.get("sleep", 0))))
    if task.fields.get("fail"):
        raise RuntimeError(f"boom on {task.fields['task']}")
    await resolve(client.xadd("done", {"task": task.fields["task"]}))


def sync_handler(client: redis.Redis, consumer: str) -> Callable[[Task], None]:
    return lambda task: run_sync(record_and_run(client, consumer, time.sleep, task))


def async_handler(client: redis.asyncio.Redis, consumer: str) -> Callable[[Task], Any]:
    return partial(record_and_run, client, consumer, asyncio.sleep)


def config_of(consumer: str, settings: dict) -> WorkerConfig:
    recovery = RecoveryConfig(**settings.get("recovery", {}))
    return WorkerConfig(consumer=consumer, recovery=recovery,
                        **{k: v for k, v in settings.items() if k != "recovery"})


async def run_async(port: int, cluster: bool, config: WorkerConfig) -> dict:
    if cluster:
        client = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=port, decode_responses=True)
    else:
        client = redis.asyncio.Redis(port=port, decode_responses=True)
    worker = AsyncWorker(client, config, async_handler(client, config.consumer))
    await worker.run()
    await client.aclose()
    return worker.stats.snapshot()


def main() -> None:
    port, consumer, mode, settings = int(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    cluster = settings.pop("cluster", False)
    config = config_of(consumer, settings)
    if mode == "async":
        stats = asyncio.run(run_async(port, cluster, config))
    else:
        if cluster:
            client = RedisCluster(host="127.0.0.1", port=port, decode_responses=True)
        else:
            client = redis.Redis(port=port, decode_responses=True)
        worker = Worker(client, config, sync_handler(client, consumer))
        worker.run()
        stats = worker.stats.snapshot()
    print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    main()
