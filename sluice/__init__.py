"""Sluice in a Python program: the embedded engine, the reliable consumer, and the
Spark formats.

    from sluice import Engine, EmbeddedRedis, Worker, WorkerConfig

    Engine, EmbeddedRedis, AsyncEmbeddedRedis, ResponseError   the embedded API (`engine`'s)
    Worker, AsyncWorker, WorkerConfig, Task                    the reliable consumer (`sluice.worker`)

`sluice.worker` (Worker, AsyncWorker, `sluice-worker`) and `sluice.spark` (the PySpark
formats `sluice` and `sluice-snapshot`) are clients of a Sluice or Redis server, or
readers of Sluice's files through `persist`: they never reach into engine internals.
The names above load on first use, so that `import sluice.spark` in a Spark worker
does not load the engine or redis-py."""
from __future__ import annotations

ENGINE_NAMES = ("Engine", "EmbeddedRedis", "AsyncEmbeddedRedis", "ResponseError")
WORKER_NAMES = ("Worker", "AsyncWorker", "WorkerConfig", "Task")

__all__ = [*ENGINE_NAMES, *WORKER_NAMES]


def __getattr__(name: str):
    if name in ENGINE_NAMES:
        import engine
        return getattr(engine, name)
    if name in WORKER_NAMES:
        import sluice.worker
        return getattr(sluice.worker, name)
    raise AttributeError(f"module 'sluice' has no attribute {name!r}")
