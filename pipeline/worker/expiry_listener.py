"""The fast path: a lock key's `expired` event means its worker stopped renewing it
(died, or its handler failed), so that entry is requeued at once, without waiting
for the next scan."""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Optional

import redis

from engine import AsyncEmbeddedRedis, EmbeddedRedis
from pipeline.worker.background import Background
from pipeline.worker.config import WorkerConfig
from pipeline.worker.flows import Maybe, for_client, resolve, run_sync
from pipeline.worker.keys import entry_of_lock
from pipeline.worker.requeue import Requeuer
from pipeline.worker.task import text

log = logging.getLogger("pipeline.worker")

EXPIRY_REASON = "lock expired: its worker died or its handler failed"
REQUIRED_FLAGS = "Ex"     # keyevent notifications (E) of expired keys (x)
RETRY_PAUSE_S = 1.0
POLL_S = 0.5              # how long one wait for a message lasts (how fast a stop is seen)
# How often the listener checks that the events are still on: a server restarted without
# them in its configuration (CONFIG SET does not outlive a restart) publishes none, and
# redis-py resubscribes after a reconnect without telling us.
RECHECK_S = 5.0


def ensure_expired_events(client: Any) -> Maybe[bool]:
    """True when the server publishes expired-key events, turning them on if it can.
    When it cannot (CONFIG refused, as managed services do), logs what to set: until
    then only the periodic scan recovers, within one reconciliation interval. An
    awaitable of the answer with an asyncio client."""
    return for_client(client, _ensure_expired_events(client))


async def _ensure_expired_events(client: Any) -> bool:
    if isinstance(client, (EmbeddedRedis, AsyncEmbeddedRedis)):
        log.info("the embedded engine publishes no keyspace events: dead workers' tasks are "
                 "recovered by the periodic scan, within one reconciliation interval")
        return False
    try:
        reply = await resolve(client.config_get("notify-keyspace-events"))
    except redis.ResponseError as error:
        return _events_off(None, error)
    current = text(reply.get("notify-keyspace-events", ""))
    if ("E" in current) and ("x" in current or "A" in current):
        return True
    try:
        await resolve(client.config_set("notify-keyspace-events", current + REQUIRED_FLAGS))
    except redis.ResponseError as error:
        return _events_off(current, error)
    return True


def _events_off(current: Optional[str], refused: Exception) -> bool:
    log.warning(
        "expired-key events are off (notify-keyspace-events=%r) and could not be turned on (%s): "
        "set notify-keyspace-events to include 'Ex' (e.g. `CONFIG SET notify-keyspace-events Ex`, "
        "or `notify-keyspace-events Ex` in redis.conf); until then dead workers' tasks are "
        "recovered only by the periodic scan", current, refused)
    return False


class ExpiryEvents:
    """Listens on the `expired` keyevent channel of the client's database and requeues
    the entries whose locks expire; `listen` serves a thread and a task alike."""

    def __init__(self, client: Any, config: WorkerConfig, requeuer: Requeuer) -> None:
        self._client = client
        self._config = config
        self._requeuer = requeuer
        pool = getattr(client, "connection_pool", None)     # a cluster client has none: db 0
        db = pool.connection_kwargs.get("db", 0) if pool is not None else 0
        self.channel = f"__keyevent@{db}__:expired"

    async def listen(self, stopped: Callable[[], bool], subscribed: Callable[[], None],
                     pause: Callable[[float], Maybe[Any]]) -> None:
        """Until `stopped()`: subscribe (then call `subscribed`), requeue on each event,
        after a lost connection `pause` and subscribe again; every RECHECK_S turn the
        events back on if a restarted server forgot them."""
        while not stopped():
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                await resolve(pubsub.subscribe(self.channel))
                subscribed()
                recheck_at = time.monotonic() + RECHECK_S
                while not stopped():
                    if time.monotonic() >= recheck_at:
                        await resolve(ensure_expired_events(self._client))
                        recheck_at = time.monotonic() + RECHECK_S
                    message = await resolve(pubsub.get_message(timeout=POLL_S))
                    if message is not None:
                        await resolve(self._on_expired(text(message["data"])))
            except redis.RedisError as error:
                log.warning("expiry listener lost its connection (reconnecting): %s", error)
                await resolve(pause(RETRY_PAUSE_S))
            finally:
                await resolve(getattr(pubsub, "aclose", pubsub.close)())

    def _on_expired(self, key: str) -> Maybe[Any]:
        entry_id = entry_of_lock(self._config.stream, key)
        if entry_id is None:
            return None
        return self._requeuer.requeue(entry_id, "keyspace", EXPIRY_REASON)


class ExpiryListener(Background):
    """The listener in a thread, beside the sync worker."""

    def __init__(self, events: ExpiryEvents) -> None:
        super().__init__("worker-expiry")
        self._events = events
        self._subscribed = threading.Event()

    def start(self, timeout: float = 5.0) -> None:
        """Starts listening; returns once subscribed (so no expiry after start is missed)."""
        super().start()
        self._subscribed.wait(timeout)

    def _run(self) -> None:
        run_sync(self._events.listen(self._stop.is_set, self._subscribed.set, self._stop.wait))
