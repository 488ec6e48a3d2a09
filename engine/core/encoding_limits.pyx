"""The encoding thresholds of collections (see encoding_limits.pxd)."""


cdef class EncodingLimits:
    """Redis's defaults unless set."""

    def __init__(self):
        self.set_max_intset_entries = 512
        self.set_max_listpack_entries = 128
        self.set_max_listpack_value = 64
        self.hash_max_listpack_entries = 512
        self.hash_max_listpack_value = 64
        self.zset_max_listpack_entries = 128
        self.zset_max_listpack_value = 64
        self.list_max_listpack_size = -2
        self.list_compress_depth = 0


DEFAULT_LIMITS = EncodingLimits()
