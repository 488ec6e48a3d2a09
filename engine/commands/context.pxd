# What a command sees besides its arguments: the database, the command's "now", the
# reply protocol, and where it reports its effects (for the log), touched keys (for
# blocked readers and WATCH) and keyspace events. Keys are those of `db`; a key of
# another database is reported as a (db index, key) pair (touch_in).

from libc.stdint cimport int64_t, uint64_t
from engine.core.keyspace cimport Database, Keyspace
from engine.core.clock cimport Clock
from engine.core.encoding_limits cimport EncodingLimits

cdef class CommandContext:
    cdef public object engine         # the caller's Engine: for the api layer's commands
                                      # (WAITAOF); engine/commands/ sees only `keyspace`
    cdef public Keyspace keyspace     # every database, the memory account, IDMP defaults
    cdef object __weakref__
    cdef public Database db
    cdef public Clock clock
    cdef public int64_t now           # ms; read from the clock once per command
    cdef public bint resp3
    cdef public bint null_array       # a None reply is a null array, not a null bulk
    cdef public object nil_array      # what a null array inside a reply is: None, or
                                      # engine.resp.reply.NULL_ARRAY for exact RESP (server)
    cdef public bint encode_replies   # big replies as EncodedReply RESP (the server)
    cdef public bint logging          # someone consumes effects (else they are skipped)
    cdef public long long dirty       # changes made (counted with or without logging)
    cdef public long long write_seq   # the engine's effects_seq after this caller's last
                                      # logged write (Redis's woff: what WAITAOF waits for)
    cdef public bint tracking         # someone consumes touched keys and events
    cdef public list effects          # argv lists that replay this command's changes
    cdef public list touched          # keys whose value changed
    cdef public list woken            # keys whose blocked readers must look again
                                      # though their value did not change
    cdef public list events           # (class, event, key) keyspace notifications
    cdef public Py_ssize_t expired_fired  # keys of db.expired whose events fired
    cdef public object block          # set by a blocking read that must wait
    cdef public bint flushed_all      # FLUSHALL ran: persistence snapshots (Engine.flush)
    cdef public uint64_t node_max_bytes
    cdef public uint64_t node_max_entries
    cdef public int64_t max_string    # proto-max-bulk-len: how long a string may grow
    cdef public EncodingLimits limits   # the engine's collection encoding thresholds

    cdef inline void propagate(self, list argv, long long changes=1):
        """`changes` changes (Redis's count for the command: one per element added,
        removed or set), logged as argv when someone consumes effects."""
        self.dirty += changes
        if self.logging:
            self.effects.append(argv)

    cdef inline bint logs(self, long long changes=1):
        """Counts `changes`; true when the caller must append their effects (so an
        effect that is costly to build is built only for a listener)."""
        self.dirty += changes
        return self.logging

    cdef inline bint pending(self, Database db):
        """db has keys it expired on lookup or created whose events have not fired."""
        return db.added or (db is self.db and len(db.expired) > self.expired_fired)

    cdef inline void fire_pending(self, Database db):
        """The events of the keys db expired on lookup (`expired`) or created (`new`,
        notify-keyspace-events n) so far, fired as Redis fires them: before the events
        of the change that follows."""
        cdef list keys
        cdef Py_ssize_t n
        if db is self.db:
            n = len(db.expired)
            if n > self.expired_fired:
                if self.tracking:
                    for key in db.expired[self.expired_fired:]:
                        self.touched.append(key)
                        self.events.append(("x", b"expired", key))
                self.expired_fired = n
        keys = db.added
        if keys:
            db.added = []
            if self.tracking:
                for key in keys:
                    self.events.append(("n", b"new", key if db is self.db else (db.index, key)))

    cdef inline void touch(self, bytes key, str cls, bytes event):
        """key's value changed (wakes blocked readers, aborts WATCH) and event fires."""
        if self.tracking:
            if self.pending(self.db):
                self.fire_pending(self.db)
            self.touched.append(key)
            self.events.append((cls, event, key))

    cdef inline void touch_in(self, Database db, bytes key, str cls, bytes event):
        """touch for a key of database db, which may be another than the command's
        (COPY ... DB): reported as a (db index, key) pair."""
        if db is self.db:
            self.touch(key, cls, event)
        elif self.tracking:
            if self.pending(db):
                self.fire_pending(db)
            where = (db.index, key)
            self.touched.append(where)
            self.events.append((cls, event, where))

    cdef inline void wake(self, bytes key, str cls, bytes event):
        """A consumer-group change: blocked readers look again, but (as in Redis) it
        does not count as a change of the key for WATCH."""
        if self.tracking:
            if self.pending(self.db):
                self.fire_pending(self.db)
            self.woken.append(key)
            self.events.append((cls, event, key))

    cdef inline void notify(self, bytes key, str cls, bytes event):
        """A keyspace event for a change WATCH does not see (e.g. a new consumer)."""
        if self.tracking:
            if self.pending(self.db):
                self.fire_pending(self.db)
            self.events.append((cls, event, key))
