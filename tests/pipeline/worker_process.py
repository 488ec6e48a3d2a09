"""A worker process for tests/pipeline/test_worker.py (and test_worker_cluster.py, with
"cluster": true in its config), run as
`python tests/pipeline/worker_process.py PORT CONSUMER CONFIG_JSON`.

Its handler records every start (`starts`: "task consumer") and every completion
(`done`: task -> count), sleeps the entry's `sleep` seconds and raises when the entry
has `fail`. On a clean exit it prints the worker's stats as JSON."""
from __future__ import annotations

import json
import logging
import sys
import time

import redis
from redis.cluster import RedisCluster

from pipeline.worker import RecoveryConfig, Task, Worker, WorkerConfig


def main() -> None:
    port, consumer, settings = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if settings.pop("cluster", False):           # the port is one node of a Redis Cluster
        client = RedisCluster(host="127.0.0.1", port=port, decode_responses=True)
    else:
        client = redis.Redis(port=port, decode_responses=True)
    recovery = RecoveryConfig(**settings.pop("recovery", {}))
    config = WorkerConfig(consumer=consumer, recovery=recovery, **settings)

    def handle(task: Task) -> None:
        client.xadd("starts", {"task": task.fields["task"], "consumer": consumer})
        time.sleep(float(task.fields.get("sleep", 0)))
        if task.fields.get("fail"):
            raise RuntimeError(f"boom on {task.fields['task']}")
        client.xadd("done", {"task": task.fields["task"]})

    worker = Worker(client, config, handle)
    worker.run()
    print(json.dumps(worker.stats.snapshot()), flush=True)


if __name__ == "__main__":
    main()
