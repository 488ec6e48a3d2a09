# LZF in C, for the compressed interior nodes of lists (list-compress-depth) and for the
# strings of RDB payloads.

# The compressed form of src[0:n] in dst (room for cap bytes): its length, or 0 when it
# would not fit (the data does not compress enough).
cdef size_t lzf_compress(const unsigned char* src, size_t n, unsigned char* dst,
                         size_t cap) noexcept

# Whether src[0:n] decompresses to exactly `expected` bytes, written to dst.
cdef bint lzf_decompress_to(const unsigned char* src, size_t n, unsigned char* dst,
                            size_t expected) noexcept
