"""Redis Cluster mode (the RFC's ClusterModeOSS). Everything a task touches shares the
stream's hash slot (keys.py), so commands and scripts route like the stream itself; the
one per-node concern is keyspace notifications: a node publishes only the expiries of
its own keys, and a cluster client's Pub/Sub does not gather them across nodes. A
stream's lock keys all expire on the master that owns the stream's slot, so that
master is the one node whose events matter: each consumer of the stream subscribes
there (one master per consumer, chosen deterministically from the slot map), and
consumers of streams in other slots land on other masters."""
from __future__ import annotations

from typing import Any

import redis
from redis.cluster import RedisCluster


def is_cluster(client: Any) -> bool:
    return isinstance(client, RedisCluster)


def events_source(client: Any, stream: str) -> tuple[Any, str]:
    """Where to read `stream`'s lock expiries, and that place's name (for logs and to
    see when it changes): on a cluster, a direct client of the master that owns the
    stream's slot in the client's current view; else the client itself."""
    if not is_cluster(client):
        return client, "server"
    node = client.get_node_from_key(stream)
    return client.get_redis_connection(node), node.name


def owner_name(client: Any, stream: str) -> str:
    """The name `events_source` would give now (a lookup in the client's slot map)."""
    return client.get_node_from_key(stream).name if is_cluster(client) else "server"


def refresh_topology(client: Any) -> None:
    """Re-read which master owns which slots (after a failover or resharding); nothing
    to do for a single server."""
    if is_cluster(client):
        client.nodes_manager.initialize()


def moved_while_blocked(error: redis.ResponseError) -> bool:
    """True for the error a blocked XREADGROUP gets when its stream leaves the node:
    migrated to another master (MIGRATE deletes the source's copy) or its master
    turned replica in a failover. Reading again meets MOVED, which the cluster client
    follows."""
    return str(error).startswith("UNBLOCKED")
