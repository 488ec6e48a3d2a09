# What the collection families (lists.pyx, hashes.pyx, sets.pyx, ...) share: the
# removal of a collection that a command emptied, and HSCAN/SSCAN/ZSCAN's reply.
from libc.stdint cimport int64_t
from engine.commands.context cimport CommandContext

# After an in-place change of the collection `value` at key: an empty one is removed
# (its `del` event fires, as Redis removes empty collections), another one's memory
# footprint is counted again.
cdef void settle(CommandContext ctx, bytes key, object value) except *
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
