"""COPY source destination [DB index] [REPLACE]: the value duplicated under a new
name (in this or another database), its TTL with it. MOVE key db: the value itself
handed to another database under the same name, its TTL with it.

A string is immutable bytes and is shared; a stream is copied deeply (its entries'
nodes, counters, groups, consumers and PELs: engine/core/groups.pyx copy_stream);
a collection (engine/core/value_types.py) by its class's `copy()`.

Effects: COPY itself (7.0 has it), always with REPLACE: a replay must overwrite a
destination that had expired on this side but was still stored when the log was
loaded. The destination in another database is checked without lazy expiry (its
DEL could not be logged in the source database's log): an expired one is dropped
and overwritten. The destination is touched (WATCH, blocked readers) and fires
`copy_to` in its own database (CommandContext.touch_in).

MOVE logs `COPY key key DB index REPLACE` and `DEL key` rather than itself, for the
same reason: a MOVE replayed against a destination that had expired here but was
still stored when the log was loaded would move nothing.
"""
from libc.stdint cimport int64_t

from engine.core.keyspace cimport Database, ENCODED_AS_STORED, ENCODED_AS_OWN_INT
from engine.commands.strings cimport shared_integer
from engine.core.stream cimport Stream
from engine.core.groups cimport copy_stream
from engine.core.value_types import COLLECTION_CLASSES
from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int, is_option
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX

DEF INT_MAX = 2147483647


cdef object duplicate(object value):
    if type(value) is bytes:
        return value
    if type(value) is Stream:
        return copy_stream(<Stream>value)
    if type(value) in COLLECTION_CLASSES:
        return value.copy()
    raise TypeError(f"COPY: no copy for a {type(value).__name__} value")


cdef bint occupied(Database db, bytes key, int64_t now):
    """Whether key holds a live value in db (an expired one is dropped quietly)."""
    if key not in db:
        return False
    if 0 <= db.expire_at(key) <= now and not db.loading:
        db.remove(key)
        return False
    return True


cdef Database database_at(CommandContext ctx, object arg):
    """The database an index argument names (COPY's DB, MOVE's db), with Redis's errors."""
    cdef int64_t index = parse_int(arg, NULL)
    if index < -INT_MAX - 1 or index > INT_MAX:   # Redis's getIntFromObject
        raise ResponseError("ERR value is out of range, value must between "
                            "-2147483648 and 2147483647")
    databases = ctx.keyspace.databases
    if index < 0 or index >= len(databases):
        raise ResponseError("ERR DB index is out of range")
    return databases[index]


@command("copy")
def copy_(CommandContext ctx, list argv):
    cdef bytes src = argv[1], dst = argv[2]
    cdef bint replace = False
    cdef Database target = ctx.db
    cdef Py_ssize_t j = 3, argc = len(argv)
    while j < argc:
        if is_option(argv[j], b"replace"):
            replace = True
        elif is_option(argv[j], b"db") and j < argc - 1:
            j += 1
            target = database_at(ctx, argv[j])
        else:
            raise ResponseError(SYNTAX)
        j += 1
    if target is ctx.db and src == dst:
        raise ResponseError("ERR source and destination objects are the same")
    cdef Database db = ctx.db
    value = db.lookup(src, ctx.now)
    if value is None:
        return 0
    cdef int64_t expire = db.expire_at(src)
    if target is db:
        exists = db.lookup(dst, ctx.now) is not None
    else:
        exists = occupied(target, dst, ctx.now)
    if exists:
        if not replace:
            return 0
        target.remove(dst)
    cdef int mark = db.encoding_mark(src)
    if mark == ENCODED_AS_STORED and type(value) is bytes and shared_integer(value):
        mark = ENCODED_AS_OWN_INT       # Redis duplicates a shared integer's object
    target.store(dst, duplicate(value))
    target.mark_encoding(dst, mark)
    if expire != -1:
        target.set_expire(dst, expire)
    ctx.touch_in(target, dst, "g", b"copy_to")
    if ctx.logs():
        effect = [b"COPY", src, dst]
        if target is not db:
            effect += [b"DB", str(target.index).encode()]
        ctx.effects.append(effect + [b"REPLACE"])
    return 1


@command("move")
def move(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    cdef Database db = ctx.db
    cdef Database target = database_at(ctx, argv[2])
    if target is db:
        raise ResponseError("ERR source and destination objects are the same")
    value = db.lookup(key, ctx.now)
    if value is None or occupied(target, key, ctx.now):
        return 0
    cdef int64_t expire = db.expire_at(key)
    cdef int mark = db.encoding_mark(key)     # the object itself moves
    db.remove(key)
    target.store(key, value)
    target.mark_encoding(key, mark)
    if expire != -1:
        target.set_expire(key, expire)
    ctx.fire_pending(target)        # its `new` event first, as in Redis
    ctx.touch(key, "g", b"move_from")
    ctx.touch_in(target, key, "g", b"move_to")
    if ctx.logs():
        ctx.effects.append([b"COPY", key, key, b"DB", str(target.index).encode(), b"REPLACE"])
        ctx.effects.append([b"DEL", key])
    return 1
