"""Redis Cluster mode (the RFC's ClusterModeOSS). Everything a task touches shares the
stream's hash slot (keys.py), so commands and scripts route like the stream itself; the
one per-node concern is keyspace notifications: a node publishes only the expiries of
its own keys, and a cluster client's Pub/Sub does not gather them across nodes. A
stream's lock keys all expire on the master that owns the stream's slot, so that
master is the one node whose events matter: each consumer of the stream subscribes
there (one master per consumer, chosen deterministically from the slot map), and
consumers of streams in other slots land on other masters. The sync and the asyncio
cluster clients both take a node as `target_nodes=` and `pubsub(node=)`."""
from __future__ import annotations

from typing import Any, Optional

import redis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster

from sluice.worker.flows import Maybe


def is_cluster(client: Any) -> bool:
    return isinstance(client, (RedisCluster, AsyncRedisCluster))


def stream_master(client: Any, stream: str) -> Optional[Any]:
    """The master owning `stream`'s slot in the client's current view of the cluster;
    None for a single server."""
    return client.get_node_from_key(stream) if is_cluster(client) else None


def master_name(node: Optional[Any]) -> str:
    """A `stream_master` by name (for logs and to see when it changes)."""
    return "server" if node is None else node.name


def refresh_topology(client: Any) -> Maybe[None]:
    """Re-read which master owns which slots (after a failover or resharding); nothing
    to do for a single server. An awaitable with an asyncio cluster client."""
    return client.nodes_manager.initialize() if is_cluster(client) else None


def moved_while_blocked(error: redis.ResponseError) -> bool:
    """True for the error a blocked XREADGROUP gets when its stream leaves the node:
    migrated to another master (MIGRATE deletes the source's copy) or its master
    turned replica in a failover. Reading again meets MOVED, which the cluster client
    follows."""
    return str(error).startswith("UNBLOCKED")
