"""A worker process for tests/pipeline/test_worker_chaos.py, run as
`python tests/pipeline/chaos_worker.py PORT CONSUMER MODE CONFIG_JSON LOG_PATH [SLOW_S]`,
MODE being `sync` (Worker on redis.Redis) or `async` (AsyncWorker on redis.asyncio.Redis).

Its handler appends one line to LOG_PATH when an execution starts and one when it ends:
"start|done|fail EXECUTION TASK PID TIME" (TASK is the entry's `n`), each with one
write(2) on an O_APPEND descriptor, so a kill -9 keeps every line written before it.
It sleeps the entry's `sleep` seconds (SLOW_S instead, when given: the slow worker)
and raises when the entry has `fail`. On a clean exit it prints its stats as JSON."""
from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
import uuid
from typing import Any, Callable, Optional

import redis
import redis.asyncio

from sluice.worker import AsyncWorker, RecoveryConfig, Task, Worker, WorkerConfig
from sluice.worker.flows import resolve, run_sync


class Recorder:
    """The handler's record of its executions, for a sync or an asyncio sleep."""

    def __init__(self, log_path: str, slow_s: Optional[float]) -> None:
        self._fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._slow_s = slow_s
        self._pid = os.getpid()

    def _record(self, event: str, execution: str, task: str) -> None:
        os.write(self._fd, f"{event} {execution} {task} {self._pid} {time.time():.6f}\n".encode())

    async def handle(self, sleep: Callable[[float], Any], task: Task) -> None:
        execution, n = uuid.uuid4().hex, task.fields["n"]
        self._record("start", execution, n)
        await resolve(sleep(self._slow_s if self._slow_s is not None else float(task.fields.get("sleep", 0))))
        if task.fields.get("fail"):
            self._record("fail", execution, n)
            raise RuntimeError(f"poison task {n}")
        self._record("done", execution, n)


async def run_async(port: int, config: WorkerConfig, recorder: Recorder) -> dict:
    client = redis.asyncio.Redis(port=port, decode_responses=True)
    worker = AsyncWorker(client, config, lambda task: recorder.handle(asyncio.sleep, task))
    await worker.run()
    await client.aclose()
    return worker.stats.snapshot()


def main() -> None:
    port, consumer, mode, settings, log_path = (int(sys.argv[1]), sys.argv[2], sys.argv[3],
                                                json.loads(sys.argv[4]), sys.argv[5])
    slow_s = float(sys.argv[6]) if len(sys.argv) > 6 else None
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    recovery = RecoveryConfig(**settings.pop("recovery", {}))
    config = WorkerConfig(consumer=consumer, recovery=recovery, **settings)
    recorder = Recorder(log_path, slow_s)
    if mode == "async":
        stats = asyncio.run(run_async(port, config, recorder))
    else:
        worker = Worker(redis.Redis(port=port, decode_responses=True), config,
                        lambda task: run_sync(recorder.handle(time.sleep, task)))
        worker.run()
        stats = worker.stats.snapshot()
    print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    main()
