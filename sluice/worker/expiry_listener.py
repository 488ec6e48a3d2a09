"""The fast path: a lock key's `expired` event means its worker stopped renewing it
(died, or its handler failed), so that entry is requeued at once, without waiting
for the next scan. What it cannot see (an event published while it was
reconnecting or moving to another master) the periodic scan still finds."""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Optional

import redis
from redis.exceptions import RedisClusterException

from engine import AsyncEmbeddedRedis, EmbeddedRedis
from sluice.worker.background import Background
from sluice.worker.cluster import master_name, stream_master
from sluice.worker.config import WorkerConfig
from sluice.worker.flows import Maybe, for_client, resolve, run_sync
from sluice.worker.keys import entry_of_lock
from sluice.worker.requeue import Requeuer
from sluice.worker.task import text

log = logging.getLogger("sluice.worker")

EXPIRY_REASON = "lock expired: its worker died or its handler failed"
REQUIRED_FLAGS = "Ex"     # keyevent notifications (E) of expired keys (x)
RETRY_PAUSE_S = 1.0
POLL_S = 0.5              # how long one wait for a message lasts (how fast a stop is seen)
# How often the listener checks that the events are still on: a server restarted without
# them in its configuration (CONFIG SET does not outlive a restart) publishes none, and
# redis-py resubscribes after a reconnect without telling us.
RECHECK_S = 5.0
SUBSCRIBE_TIMEOUT_S = 5.0


def ensure_expired_events(client: Any) -> Maybe[bool]:
    """True when the server publishes expired-key events, turning them on if it can.
    When it cannot (CONFIG refused, as managed services do), logs what to set: until
    then only the periodic scan recovers, within one reconciliation interval. An
    awaitable of the answer with an asyncio client."""
    return for_client(client, _ensure_expired_events(client))


async def _ensure_expired_events(client: Any, node: Optional[Any] = None) -> bool:
    """ensure_expired_events as a flow; on a cluster, on the master `node`."""
    if isinstance(client, (EmbeddedRedis, AsyncEmbeddedRedis)):
        log.info("the embedded engine publishes no keyspace events: dead workers' tasks are "
                 "recovered by the periodic scan, within one reconciliation interval")
        return False
    on_node = {} if node is None else {"target_nodes": node}
    try:
        reply = await resolve(client.config_get("notify-keyspace-events", **on_node))
    except redis.ResponseError as error:
        return _events_off(None, error)
    current = text(reply.get("notify-keyspace-events", ""))
    if ("E" in current) and ("x" in current or "A" in current):
        return True
    try:
        await resolve(client.config_set("notify-keyspace-events", current + REQUIRED_FLAGS, **on_node))
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
    the entries whose locks expire; `listen` serves a thread and a task alike. It listens
    where the stream's lock keys expire: the server, or on a cluster the master owning
    the stream's slot (cluster.py), and follows that slot when it moves: at once after
    `retarget`, and on its own once the client's slot map shows the move."""

    def __init__(self, client: Any, config: WorkerConfig, requeuer: Requeuer) -> None:
        self._client = client
        self._config = config
        self._requeuer = requeuer
        pool = getattr(client, "connection_pool", None)     # a cluster client has none: db 0
        db = pool.connection_kwargs.get("db", 0) if pool is not None else 0
        self.channel = f"__keyevent@{db}__:expired"
        self._checked_on = ""       # the master whose notify-keyspace-events we ensured
        self._wanted = 0            # subscriptions asked for: retarget raises it
        self.listening = -1         # the `_wanted` the current subscription answers; -1: none

    async def turn_on(self) -> bool:
        """Whether the stream's master publishes expired events (ensure_expired_events
        there): the listener is worth starting."""
        node = stream_master(self._client, self._config.stream)
        self._checked_on = master_name(node)
        return await _ensure_expired_events(self._client, node)

    def retarget(self) -> int:
        """Asks for a subscription anew where the client's slot map now puts the stream;
        the `listening` value that says it is in place."""
        self._wanted += 1
        return self._wanted

    async def listen(self, stopped: Callable[[], bool], subscribed: Callable[[], None],
                     pause: Callable[[float], Maybe[Any]]) -> None:
        """Until `stopped()`: subscribe where the stream's events are published (then
        set `listening` and call `subscribed`), requeue on each event, subscribe again
        when retargeted or the slot moved, and after a lost connection `pause` first;
        every RECHECK_S turn the events back on there if a restarted server forgot them."""
        while not stopped():
            pubsub = None
            try:
                wanted = self._wanted
                node = stream_master(self._client, self._config.stream)
                name = master_name(node)
                if name != self._checked_on:            # a new master: it logs what to set
                    await _ensure_expired_events(self._client, node)
                    self._checked_on = name
                pubsub = self._client.pubsub() if node is None else self._client.pubsub(node=node)
                await resolve(pubsub.subscribe(self.channel))
                await self._confirmed(pubsub)
                self.listening = wanted
                subscribed()
                recheck_at = time.monotonic() + RECHECK_S
                while not stopped() and self._still_wanted(wanted, name):
                    if time.monotonic() >= recheck_at:
                        await _ensure_expired_events(self._client, node)
                        recheck_at = time.monotonic() + RECHECK_S
                    message = await resolve(pubsub.get_message(timeout=POLL_S))
                    if message is not None and message["type"] == "message":
                        await resolve(self._on_expired(text(message["data"])))
            except (redis.RedisError, RedisClusterException) as error:
                log.warning("expiry listener lost its connection (reconnecting): %s", error)
                await resolve(pause(RETRY_PAUSE_S))
            finally:
                self.listening = -1
                if pubsub is not None:
                    await resolve(getattr(pubsub, "aclose", pubsub.close)())

    def _still_wanted(self, wanted: int, name: str) -> bool:
        """False once retargeted or the client's slot map moved the stream elsewhere."""
        return self._wanted == wanted and master_name(stream_master(self._client, self._config.stream)) == name

    @staticmethod
    async def _confirmed(pubsub: Any) -> None:
        """Waits for the server's subscribe reply: from then on no expiry is missed."""
        deadline = time.monotonic() + SUBSCRIBE_TIMEOUT_S
        while time.monotonic() < deadline:
            message = await resolve(pubsub.get_message(timeout=0.1))
            if message is not None and message["type"] == "subscribe":
                return
        raise redis.TimeoutError(f"no subscribe reply within {SUBSCRIBE_TIMEOUT_S} s")

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
        self._subscribed = threading.Condition()

    def start(self, timeout: float = 5.0) -> None:
        """Starts listening; returns once subscribed (so no expiry after start is missed)."""
        super().start()
        self.wait_listening(0, timeout)

    def wait_listening(self, generation: int, timeout: float = 5.0) -> None:
        """Returns once the subscription answering `generation` (ExpiryEvents.retarget)
        is in place, or after `timeout`."""
        with self._subscribed:
            self._subscribed.wait_for(lambda: self._events.listening >= generation, timeout)

    def _notify(self) -> None:
        with self._subscribed:
            self._subscribed.notify_all()

    def _run(self) -> None:
        run_sync(self._events.listen(self._stop.is_set, self._notify, self._stop.wait))
