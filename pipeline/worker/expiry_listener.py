"""The fast path: a lock key's `expired` event means its worker stopped renewing it
(died, or its handler failed), so that entry is requeued at once, without waiting
for the next scan."""
from __future__ import annotations

import logging
import threading
import time
from typing import Any

import redis

from pipeline.worker.background import Background
from pipeline.worker.config import WorkerConfig
from pipeline.worker.keys import entry_of_lock
from pipeline.worker.requeue import Requeuer
from pipeline.worker.task import text

log = logging.getLogger("pipeline.worker")

EXPIRY_REASON = "lock expired: its worker died or its handler failed"
REQUIRED_FLAGS = "Ex"     # keyevent notifications (E) of expired keys (x)
RETRY_PAUSE_S = 1.0
# How often the listener checks that the events are still on: a server restarted without
# them in its configuration (CONFIG SET does not outlive a restart) publishes none, and
# redis-py resubscribes after a reconnect without telling us.
RECHECK_S = 5.0


def ensure_expired_events(client: Any) -> bool:
    """True when the server publishes expired-key events, turning them on if it can.
    When it cannot (CONFIG refused, as managed services do), logs what to set: until
    then only the periodic scan recovers, within one reconciliation interval."""
    try:
        current = text(client.config_get("notify-keyspace-events").get("notify-keyspace-events", ""))
    except redis.ResponseError as error:
        current, refused = None, error
    else:
        if ("E" in current) and ("x" in current or "A" in current):
            return True
        try:
            client.config_set("notify-keyspace-events", current + REQUIRED_FLAGS)
            return True
        except redis.ResponseError as error:
            refused = error
    log.warning(
        "expired-key events are off (notify-keyspace-events=%r) and could not be turned on (%s): "
        "set notify-keyspace-events to include 'Ex' (e.g. `CONFIG SET notify-keyspace-events Ex`, "
        "or `notify-keyspace-events Ex` in redis.conf); until then dead workers' tasks are "
        "recovered only by the periodic scan", current, refused)
    return False


class ExpiryListener(Background):
    def __init__(self, client: Any, config: WorkerConfig, requeuer: Requeuer) -> None:
        super().__init__("worker-expiry")
        self._client = client
        self._config = config
        self._requeuer = requeuer
        pool = getattr(client, "connection_pool", None)     # a cluster client has none: db 0
        db = pool.connection_kwargs.get("db", 0) if pool is not None else 0
        self._channel = f"__keyevent@{db}__:expired"
        self._subscribed = threading.Event()

    def start(self, timeout: float = 5.0) -> None:
        """Starts listening; returns once subscribed (so no expiry after start is missed)."""
        super().start()
        self._subscribed.wait(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self._channel)
                self._subscribed.set()
                recheck_at = time.monotonic() + RECHECK_S
                while not self._stop.is_set():
                    if time.monotonic() >= recheck_at:
                        ensure_expired_events(self._client)
                        recheck_at = time.monotonic() + RECHECK_S
                    message = pubsub.get_message(timeout=0.5)
                    if message is not None:
                        self._on_expired(text(message["data"]))
            except redis.RedisError as error:
                log.warning("expiry listener lost its connection (reconnecting): %s", error)
                self._stop.wait(RETRY_PAUSE_S)
            finally:
                pubsub.close()

    def _on_expired(self, key: str) -> None:
        entry_id = entry_of_lock(self._config.stream, key)
        if entry_id is not None:
            self._requeuer.requeue(entry_id, "keyspace", EXPIRY_REASON)
