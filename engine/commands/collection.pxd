# What the collection families (lists.pyx, hashes.pyx, sets.pyx, ...) share: the
# removal of a collection that a command emptied, HDEL/SREM/ZREM's removals,
# HSCAN/SSCAN/ZSCAN's reply, the arguments of LMPOP/ZMPOP & co., the waiting of the
# blocking pops (BLPOP, BZPOPMIN & co.) and the rank ranges of LRANGE/LTRIM/ZRANGE.
from libc.stdint cimport int64_t
from engine.commands.context cimport CommandContext

# After an in-place change of the collection `value` at key: an empty one is removed
# (its `del` event fires, as Redis removes empty collections), another one's memory
# footprint is counted again.
cdef void settle(CommandContext ctx, bytes key, object value) except *
# HDEL/SREM/ZREM key item [item ...] on the collection `value` at key (None: missing,
# 0): `remove(value, item)` (true when it was there) for each item; when any went, the
# `event` fires, an emptied collection goes (settle), each item removed counts as one
# change (Redis's dirty) and the effect is EVENT key <the items removed>. The count
# removed.
cdef Py_ssize_t remove_each(CommandContext ctx, list argv, object value, object remove,
                            str cls, bytes event) except -1
# HSCAN/SSCAN/ZSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES], the cursor
# checked (parse_cursor) before the key was looked up, as Redis does: `items` is
# the collection flat (member, or field and value when `pairs`); MATCH filters on
# the member/field; None for a missing key (the options are not checked then, as in Redis).
# Every matching item comes back in one call with cursor 0.
cdef list scan_items(list argv, list items, bint pairs, bint novalues_ok)
# HRANDFIELD/SRANDMEMBER's count: -LONG_MAX..LONG_MAX, with Redis's errors.
cdef int64_t random_count(object arg) except? -1
# HRANDFIELD/SRANDMEMBER/ZRANDMEMBER with a negative count: `picks` items of `value`
# (which has `nbytes` and a length), each with `extra` bytes more (a score), may
# repeat, so the reply's size is the count's, not the collection's. One estimated
# beyond RANDOM_REPLY_MAX bytes is refused with "ERR value is out of range" (a
# deliberate difference: Redis builds it until its memory runs out).
cdef void check_repeats(int64_t picks, object value, int extra) except *
# LMPOP/BLMPOP/ZMPOP/BZMPOP's `numkeys key [key ...] END [COUNT count]` from
# argv[numkeys_at] on, END being `first_end` or `second_end` (LEFT|RIGHT, MIN|MAX):
# the keys; `*second` is true for second_end, `*count` is COUNT's (1 without it).
# Errors in Redis's order: numkeys, room for the keys and END, END, COUNT.
cdef list mpop_args(list argv, Py_ssize_t numkeys_at, bytes first_end, bytes second_end,
                    bint* second, int64_t* count)
# A blocking pop's timeout argument (float seconds, Redis's errors) as the ms to wait,
# 0 = forever.
cdef int64_t block_timeout(CommandContext ctx, object arg) except -1
# A pop found nothing: the nil reply (a null array when `null_array`), and the
# BlockRequest (reads.pyx) for `keys` holding `key_type` (b"list", b"zset"); the
# session decides whether it blocks (not in MULTI or a script).
cdef object block_or_nil(CommandContext ctx, list keys, int64_t timeout, list argv,
                         bytes key_type, bint null_array)
# A rank range start..end of a collection of n items (negative ranks count from the
# tail) clipped to 0..n-1 in place; false when nothing is left of it.
cdef bint rank_range(int64_t n, int64_t* start, int64_t* end) noexcept
