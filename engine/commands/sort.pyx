"""SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
[STORE destination] and SORT_RO (the same without STORE): the elements of a list, set
or sorted set, ordered by their own value or by values found through a pattern.

A pattern's first `*` is replaced by the element to name a key; `key->field` after
that `*` reads a hash field instead of a string; `#` (GET only) is the element
itself. A missing key, a key of another type or a pattern without `*` finds nothing:
a nil reply (an empty string in a STORE), score 0 in a numeric sort, and before
every found value in an ALPHA sort. BY without `*` does not sort: a list or sorted
set keeps its own order (reversed by DESC); a set is then sorted ALPHA, as Redis
does under STORE and in scripts (its order is unspecified otherwise).

Numeric sorting reads each value with C's strtod, as Redis does: anything it does
not read whole (or out of range, or NaN) fails the command; equal scores order by
the elements' bytes. ALPHA compares bytes (Redis's strcoll in the C locale).

Effects: a STORE logs `DEL destination` and the RPUSHes that recreate the result
(the sort depends on other keys, which a replay need not hold alike).
"""
from libc.errno cimport errno, ERANGE
from libc.math cimport isnan
from libc.stdint cimport int64_t
from libc.stdlib cimport strtod
from operator import itemgetter

from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int, is_option
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX, WRONGTYPE
from engine.core.hash_value import HashValue
from engine.core.list_value import ListValue
from engine.core.set_value import SetValue
from engine.core.sorted_set import SortedSetValue
from engine.formats.rewrite cimport recreate_commands

NOT_A_DOUBLE = "ERR One or more scores can't be converted into double"


cdef object by_pattern(CommandContext ctx, bytes pattern, bytes element):
    """The value a BY/GET pattern finds for element, None when it finds nothing."""
    if pattern == b"#":
        return element
    cdef Py_ssize_t star = pattern.find(b"*")
    if star < 0:
        return None
    cdef Py_ssize_t arrow = pattern.find(b"->", star + 1)
    field = None
    if arrow >= 0 and arrow + 2 < len(pattern):
        field = pattern[arrow + 2:]
        pattern = pattern[:arrow]
    value = ctx.db.lookup(pattern[:star] + element + pattern[star + 1:], ctx.now)
    if field is None:
        return value if type(value) is bytes else None
    return value.get(field) if type(value) is HashValue else None


cdef double score_of(bytes text) except? -1.0:
    """text read as strtod reads it; NOT_A_DOUBLE unless all of it is a number."""
    cdef const char* start = text
    cdef char* end
    errno = 0
    cdef double score = strtod(start, &end)
    if end[0] != 0 or errno == ERANGE or isnan(score):
        raise ResponseError(NOT_A_DOUBLE)
    return score


cdef list elements_of(object value):
    if type(value) is SortedSetValue:
        return [member for _, member in value]
    if type(value) is ListValue:
        return value.to_record()
    return list(value)


cdef list ordered(CommandContext ctx, list elements, bytes by, bint alpha, bint desc):
    """elements sorted as SORT sorts them (BY pattern `by` or None)."""
    keyed = []
    if alpha and by is None:
        return sorted(elements, reverse=desc)
    if alpha:
        for element in elements:
            found = by_pattern(ctx, by, element)
            keyed.append(((found is not None, found or b""), element))
    else:
        for element in elements:
            found = element if by is None else by_pattern(ctx, by, element)
            keyed.append(((0.0 if found is None else score_of(found), element), element))
    keyed.sort(key=itemgetter(0), reverse=desc)
    return [element for _, element in keyed]


cdef object sort(CommandContext ctx, list argv, bint readonly):
    cdef Py_ssize_t j = 2, argc = len(argv)
    cdef bint desc = False, alpha = False, dontsort = False
    cdef int64_t limit_start = 0, limit_count = -1
    by = store = None
    cdef list gets = []
    while j < argc:
        more = argc - j - 1
        if is_option(argv[j], b"asc"):
            desc = False
        elif is_option(argv[j], b"desc"):
            desc = True
        elif is_option(argv[j], b"alpha"):
            alpha = True
        elif is_option(argv[j], b"limit") and more >= 2:
            limit_start = parse_int(argv[j + 1], NULL)
            limit_count = parse_int(argv[j + 2], NULL)
            j += 2
        elif not readonly and is_option(argv[j], b"store") and more >= 1:
            store = argv[j + 1]
            j += 1
        elif is_option(argv[j], b"by") and more >= 1:
            by = argv[j + 1]
            dontsort = b"*" not in by
            j += 1
        elif is_option(argv[j], b"get") and more >= 1:
            gets.append(argv[j + 1])
            j += 1
        else:
            raise ResponseError(SYNTAX)
        j += 1
    value = ctx.db.lookup(argv[1], ctx.now)
    if value is not None and type(value) not in (ListValue, SetValue, SortedSetValue):
        raise ResponseError(WRONGTYPE)
    if type(value) is SortedSetValue and not value.big:
        value.make_big()             # as Redis's SORT: a later -0 score stays -0
        ctx.db.resized(argv[1])
    cdef list elements = [] if value is None else elements_of(value)
    if dontsort and type(value) is SetValue:
        dontsort, alpha, by = False, True, None
    cdef Py_ssize_t length = len(elements)
    cdef Py_ssize_t start = max(limit_start, 0)
    cdef Py_ssize_t end = length - 1 if limit_count < 0 else start + min(limit_count, length) - 1
    if start >= length:
        start, end = length - 1, length - 2
    end = min(end, length - 1)
    if dontsort:
        if desc:
            elements.reverse()
    else:
        elements = ordered(ctx, elements, by, alpha, desc)
    cdef list chosen = elements[start:end + 1] if end >= start else []
    cdef list out = chosen
    if gets:
        out = [by_pattern(ctx, pattern, element) for element in chosen for pattern in gets]
    if store is None:
        return out
    return store_result(ctx, store, out)


cdef int64_t store_result(CommandContext ctx, bytes dst, list out):
    cdef bint existed = ctx.db.lookup(dst, ctx.now) is not None
    if out:
        result = ListValue([b"" if item is None else item for item in out], ctx.limits)
        ctx.db.persist(dst)         # replaced as Redis's setKey: no `new` key event
        ctx.db.store(dst, result)
        ctx.touch(dst, "l", b"sortstore")
        if ctx.logs(len(out)):
            ctx.effects.append([b"DEL", dst])
            ctx.effects.extend(recreate_commands(dst, result))
    elif existed:
        ctx.db.remove(dst)
        ctx.touch(dst, "g", b"del")
        ctx.propagate([b"DEL", dst])
    return len(out)


@command("sort")
def sort_(CommandContext ctx, list argv):
    return sort(ctx, argv, False)


@command("sort_ro")
def sort_ro(CommandContext ctx, list argv):
    return sort(ctx, argv, True)
