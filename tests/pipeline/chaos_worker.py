"""A worker process for tests/pipeline/test_worker_chaos.py, run as
`python tests/pipeline/chaos_worker.py PORT CONSUMER CONFIG_JSON LOG_PATH [SLOW_S]`.

Its handler appends one line to LOG_PATH when an execution starts and one when it ends:
"start|done|fail EXECUTION TASK PID TIME" (TASK is the entry's `n`), each with one
write(2) on an O_APPEND descriptor, so a kill -9 keeps every line written before it.
It sleeps the entry's `sleep` seconds (SLOW_S instead, when given: the slow worker)
and raises when the entry has `fail`. On a clean exit it prints its stats as JSON."""
from __future__ import annotations

import json
import logging
import os
import sys
import time
import uuid

import redis

from pipeline.worker import RecoveryConfig, Task, Worker, WorkerConfig


def main() -> None:
    port, consumer, settings, log_path = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
    slow_s = float(sys.argv[5]) if len(sys.argv) > 5 else None
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    recovery = RecoveryConfig(**settings.pop("recovery", {}))
    config = WorkerConfig(consumer=consumer, recovery=recovery, **settings)
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    pid = os.getpid()

    def record(event: str, execution: str, task: str) -> None:
        os.write(log_fd, f"{event} {execution} {task} {pid} {time.time():.6f}\n".encode())

    def handle(task: Task) -> None:
        execution, n = uuid.uuid4().hex, task.fields["n"]
        record("start", execution, n)
        time.sleep(slow_s if slow_s is not None else float(task.fields.get("sleep", 0)))
        if task.fields.get("fail"):
            record("fail", execution, n)
            raise RuntimeError(f"poison task {n}")
        record("done", execution, n)

    worker = Worker(redis.Redis(port=port, decode_responses=True), config, handle)
    worker.run()
    print(json.dumps(worker.stats.snapshot()), flush=True)


if __name__ == "__main__":
    main()
