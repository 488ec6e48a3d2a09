"""The fast path: a lock key's `expired` event means its worker stopped renewing it
(died, or its handler failed), so that entry is requeued at once, without waiting
for the next scan. What it cannot see (an event published while it was
reconnecting or moving to another master) the periodic scan still finds."""
from __future__ import annotations

import logging
import threading
import time
from typing import Any

import redis
from redis.exceptions import RedisClusterException

from pipeline.worker.background import Background
from pipeline.worker.cluster import events_source, owner_name
from pipeline.worker.config import WorkerConfig
from pipeline.worker.keys import entry_of_lock
from pipeline.worker.requeue import Requeuer
from pipeline.worker.task import text

log = logging.getLogger("pipeline.worker")

EXPIRY_REASON = "lock expired: its worker died or its handler failed"
REQUIRED_FLAGS = "Ex"     # keyevent notifications (E) of expired keys (x)
RETRY_PAUSE_S = 1.0
SUBSCRIBE_TIMEOUT_S = 5.0


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
    """Listens where the stream's lock keys expire: the server, or on a cluster the
    master owning the stream's slot (cluster.py). It follows that slot when it moves:
    at once on `retarget`, and on its own once the client's slot map shows the move."""

    def __init__(self, client: Any, config: WorkerConfig, requeuer: Requeuer) -> None:
        super().__init__("worker-expiry")
        self._client = client
        self._config = config
        self._requeuer = requeuer
        pool = getattr(client, "connection_pool", None)     # a cluster client has none: db 0
        db = pool.connection_kwargs.get("db", 0) if pool is not None else 0
        self._channel = f"__keyevent@{db}__:expired"
        self._checked_on = ""            # the node whose notify-keyspace-events we ensured
        self._wanted = 0                 # subscriptions asked for (retarget raises it)
        self._listening = -1             # the `_wanted` the current subscription answers; -1: none
        self._changed = threading.Condition()

    def start(self, timeout: float = 5.0) -> bool:
        """Starts listening and returns True once subscribed (so no expiry after start is
        missed); False, without starting, when the server's expired events are off and
        cannot be turned on (ensure_expired_events logged what to set)."""
        events, name = events_source(self._client, self._config.stream)
        if not ensure_expired_events(events):
            return False
        self._checked_on = name
        super().start()
        self._wait_listening(timeout)
        return True

    def retarget(self, timeout: float = 5.0) -> None:
        """Subscribe anew where the client's slot map now puts the stream; returns once
        subscribed there (or after `timeout`)."""
        with self._changed:
            self._wanted += 1
        self._wait_listening(timeout)

    def _wait_listening(self, timeout: float) -> None:
        with self._changed:
            wanted = self._wanted
            self._changed.wait_for(lambda: self._listening >= wanted, timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            pubsub = None
            try:
                with self._changed:
                    wanted = self._wanted
                events, name = events_source(self._client, self._config.stream)
                if name != self._checked_on:
                    ensure_expired_events(events)       # a new master: it logs what to set
                    self._checked_on = name
                pubsub = events.pubsub()
                pubsub.subscribe(self._channel)
                self._confirmed(pubsub)
                with self._changed:
                    self._listening = wanted
                    self._changed.notify_all()
                while self._still_wanted(wanted, name):
                    message = pubsub.get_message(timeout=0.5)
                    if message is not None and message["type"] == "message":
                        self._on_expired(text(message["data"]))
            except (redis.RedisError, RedisClusterException) as error:
                log.warning("expiry listener lost its connection (reconnecting): %s", error)
                self._stop.wait(RETRY_PAUSE_S)
            finally:
                with self._changed:
                    self._listening = -1
                if pubsub is not None:
                    pubsub.close()

    def _still_wanted(self, wanted: int, name: str) -> bool:
        """False once stopping, retargeted, or the slot map moved the stream elsewhere."""
        return (not self._stop.is_set() and self._wanted == wanted
                and owner_name(self._client, self._config.stream) == name)

    @staticmethod
    def _confirmed(pubsub: Any) -> None:
        """Waits for the server's subscribe reply: from then on no expiry is missed."""
        deadline = time.monotonic() + SUBSCRIBE_TIMEOUT_S
        while time.monotonic() < deadline:
            message = pubsub.get_message(timeout=0.1)
            if message is not None and message["type"] == "subscribe":
                return
        raise redis.TimeoutError(f"no subscribe reply within {SUBSCRIBE_TIMEOUT_S} s")

    def _on_expired(self, key: str) -> None:
        entry_id = entry_of_lock(self._config.stream, key)
        if entry_id is not None:
            self._requeuer.requeue(entry_id, "keyspace", EXPIRY_REASON)
