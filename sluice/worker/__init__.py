"""A reliable consumer of a stream's group (the RFC of issue 16): every task runs to
completion at least once, and never in a second worker while its first owner lives.

    from sluice.worker import Worker, WorkerConfig
    Worker(redis.Redis(), WorkerConfig("orders", "billing", "pod-1"), handle).run()
    await AsyncWorker(redis.asyncio.Redis(), config, async_handle).run()    # asyncio

Each entry runs under a lock `lock:{stream}:<id>` renewed while its handler runs;
a lock that expires (worker died, handler failed) gets its entry requeued at once by
the keyspace listener, and a periodic scan requeues pending entries whose lock is
gone. A requeue is XACK plus XADD of the same fields with `_retry_count` and
`_original_id`, in one script; past max_retries the entry goes to `{stream}:dlq`.
What it does is counted in `worker.stats` and in Prometheus metrics (served on
/metrics with `WorkerConfig(metrics_port=...)`); a server restart is ridden out.

Clients: redis.Redis, redis.asyncio.Redis (AsyncWorker), and the embedded engine's
EmbeddedRedis / AsyncEmbeddedRedis. The embedded engine has no pub/sub, so no
expiry events reach its clients: there the periodic scan alone recovers dead
workers' entries, within one reconciliation_interval (min_idle_time after their
last delivery at the earliest).

On a Redis Cluster give Worker a `redis.cluster.RedisCluster` (AsyncWorker a
`redis.asyncio.cluster.RedisCluster`): every key of a stream shares its hash slot,
and the listener subscribes on the master owning that slot. After a failover or
resharding call `worker.reset_topology()` (awaited on the AsyncWorker); the listener
also follows on its own once the client meets a MOVED reply, the scan covers the gap.
"""
from sluice.worker.async_worker import AsyncHandler, AsyncWorker
from sluice.worker.config import ConfigError, RecoveryConfig, WorkerConfig
from sluice.worker.expiry_listener import ensure_expired_events
from sluice.worker.keys import dlq_key, lock_key
from sluice.worker.scripts import RequeueResult, Scripts
from sluice.worker.stats import WorkerStats
from sluice.worker.task import Task
from sluice.worker.worker import Handler, Worker

__all__ = ["AsyncHandler", "AsyncWorker", "ConfigError", "Handler", "RecoveryConfig", "RequeueResult",
           "Scripts", "Task", "Worker", "WorkerConfig", "WorkerStats", "dlq_key", "ensure_expired_events", "lock_key"]
