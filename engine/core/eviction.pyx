"""Which key maxmemory evicts next: Redis's approximated LRU/LFU/TTL by sampling.

Each round samples `samples` keys of every database (all keys, or only keys with a
TTL for the volatile-* policies), scores them (idle time, 255 - the LFU counter, or
how soon the TTL ends) and keeps the best candidates across rounds in a small pool,
as Redis's eviction pool does; the random policies take any sampled key. The keyspace
itself removes the victim: this module only chooses.
"""
from libc.stdint cimport int64_t
from random import randrange

from engine.core.keyspace cimport Database

POLICIES = ("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
            "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction")
POOL_SIZE = 16


cdef class Evictor:
    """A policy's choice of victims over `databases` (engine.databases). `pool`:
    [(score, db index, key)], best last; `next_db`: where the random policies look
    first (they go round the databases)."""

    def __init__(self, str policy="noeviction", int samples=5):
        if policy not in POLICIES:
            raise ValueError(policy)
        self.policy = policy
        self.samples = samples
        self.volatile = policy.startswith("volatile")
        self.lru = policy.endswith("-lru")
        self.lfu = policy.endswith("-lfu")
        self.ttl = policy == "volatile-ttl"
        self.pool = []
        self.next_db = 0

    @property
    def evicts(self) -> bool:
        return self.policy != "noeviction"

    cdef Py_ssize_t candidates(self, Database db):
        """How many keys of db the policy may evict."""
        return db.volatile_count() if self.volatile else len(db)

    cdef object sample(self, Database db):
        return db.random_volatile_key() if self.volatile else db.random_key()

    cdef int64_t score(self, Database db, bytes key, object value, int64_t now):
        cdef int64_t when
        if self.ttl:
            when = db.expire_at(key)
            return -when
        if self.lfu:
            return 255 - db.frequency(key, value, now)
        when = db.access_of(key, value)
        return now - when if 0 < when < now else 0

    cpdef tuple victim(self, list databases, int64_t now):
        """(database, key) to evict next, or None when no key qualifies."""
        cdef Database db
        cdef Py_ssize_t i, n = len(databases)
        if not self.evicts:
            return None
        if not (self.lru or self.lfu or self.ttl):
            for i in range(n):
                db = databases[(self.next_db + i) % n]
                if self.candidates(db):
                    key = self.sample(db)
                    if key is not None and key in db:
                        self.next_db = (self.next_db + i + 1) % n
                        return db, key
            return None
        for db in databases:
            if not self.candidates(db):
                continue
            for i in range(self.samples):
                key = self.sample(db)
                value = db.peek(key) if key is not None else None
                if value is not None:
                    self.offer(self.score(db, key, value, now), db.index, key)
        cdef list pool = self.pool
        while pool:
            score, index, key = pool.pop()
            db = databases[index]
            if key in db and (not self.volatile or db.expire_at(key) >= 0):
                return db, key
        return None

    cdef void offer(self, int64_t score, int index, bytes key):
        cdef list pool = self.pool
        cdef tuple entry
        for entry in pool:
            if entry[1] == index and entry[2] == key:
                return
        if len(pool) >= POOL_SIZE:
            if score <= (<tuple>pool[0])[0]:
                return
            pool.pop(0)
        cdef Py_ssize_t i = len(pool)
        while i > 0 and (<tuple>pool[i - 1])[0] > score:
            i -= 1
        pool.insert(i, (score, index, key))

    def forget(self) -> None:
        """The keyspace was emptied or the policy's scores changed: candidates go."""
        self.pool = []
