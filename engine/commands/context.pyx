"""Per-caller command context (one per client, reused across its commands)."""


cdef class CommandContext:
    def __init__(self, engine, db):
        self.engine = engine
        self.keyspace = engine.keyspace
        self.db = db
        self.clock = engine.clock
        self.limits = engine.encoding_limits
        self.resp3 = False
        self.logging = False
        self.dirty = 0
        self.tracking = False
        self.effects = []
        self.touched = []
        self.woken = []
        self.events = []
        self.block = None
        self.nil_array = None
        self.encode_replies = False
        self.node_max_bytes = 4096
        self.node_max_entries = 100
        self.max_string = 512 * 1024 * 1024     # proto-max-bulk-len's default
