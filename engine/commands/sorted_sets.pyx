"""Sorted-set commands: ZADD, ZINCRBY, ZREM, the score/rank/count queries, the ZRANGE
family (ranks, scores, lex; REV, LIMIT, WITHSCORES, ZRANGESTORE), the pops (ZPOPMIN,
ZPOPMAX, ZMPOP and their blocking forms), the ZREMRANGEBY* trims, ZRANDMEMBER,
ZSCAN, and the combinations of sets: ZUNION, ZINTER, ZDIFF, their STORE forms and
ZINTERCARD. The value is engine/core/sorted_set.pyx's SortedSetValue, read and
changed through its C methods.

Scores are replied as Redis 7.0's addReplyDouble writes them: a RESP2 bulk string of
`%.17g` (`inf`/`-inf`), a RESP3 double (a Python float, which the codec writes).

Effects are deterministic: ZADD/ZINCRBY log `ZADD key score member ...` with the
resulting scores of the members that changed; ZREM the members removed; the
ZREMRANGEBY* trims replay as given (the same state gives the same result); every
pop (ZMPOP and a served blocking pop too) is logged as ZPOPMIN/ZPOPMAX key n;
ZRANGESTORE and the STORE combinations as DEL plus the ZADDs of the stored set.
"""
from libc.stdint cimport int64_t, INT64_MAX
from libc.stdlib cimport strtod
from libc.math cimport isnan
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

import random

from engine.core.keyspace cimport Database
from engine.commands.context cimport CommandContext
from engine.commands.collection cimport (settle, random_count, scan_items, check_repeats,
                                         mpop_args, rank_range, block_timeout, block_or_nil,
                                         remove_each)
from engine.commands.parsing cimport (parse_int, parse_int_range, parse_double,
                                      parse_cursor, is_option)
from engine.commands.collection import length_handler
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX, WRONGTYPE
from engine.core.set_value import SetValue
from engine.core.sorted_set cimport SortedSetValue, ZLexBound, new_zset, score_text
from engine.core.sorted_set import format_score
from engine.formats.rewrite cimport recreate_commands
from engine.core.zset_combine cimport (
    OP_UNION, OP_INTER, OP_DIFF, AGGREGATE_SUM, AGGREGATE_MIN, AGGREGATE_MAX, combine_values,
    intersection_size)

NAN_SCORE = "ERR resulting score is not a number (NaN)"
RANGE_NOT_FLOAT = "ERR min or max is not a float"
LEX_NOT_VALID = "ERR min or max not valid string range item"

# How a ZRANGE-family command reads its range.
cdef enum:
    BY_AUTO = 0
    BY_RANK = 1
    BY_SCORE = 2
    BY_LEX = 3


# -- values and replies ----------------------------------------------------------------

cdef inline SortedSetValue zset_at(CommandContext ctx, bytes key):
    """The sorted set at key, None if absent; WRONGTYPE for any other type."""
    return <SortedSetValue>ctx.db.lookup_typed(key, ctx.now, SortedSetValue)


cdef object score_reply(CommandContext ctx, double score):
    """A score as Redis's addReplyDouble sends it (see the module docstring)."""
    return score if ctx.resp3 else score_text(score)


cdef list pairs_reply(CommandContext ctx, object pairs, bint withscores, bint nested):
    """(score, member) pairs as members, or with scores: flat in RESP2, [member,
    score] pairs when `nested` (RESP3, ZMPOP)."""
    cdef list out = []
    if not withscores:
        for _, member in pairs:
            out.append(member)
    elif nested:
        for score, member in pairs:
            out.append([member, score_reply(ctx, score)])
    else:
        for score, member in pairs:
            out.append(member)
            out.append(score_reply(ctx, score))
    return out


# -- ranges ------------------------------------------------------------------------------

cdef bint parse_score_bound(bytes arg, double* value, bint* exclusive):
    """zslParseRange's rules for one end: `(x` exclusive, else x; strtod must consume
    the text up to its end (or an embedded NUL) and give no NaN; "" is 0."""
    cdef const char* s = PyBytes_AS_STRING(arg)
    cdef char* end
    exclusive[0] = s[0] == c'('
    if exclusive[0]:
        s += 1
    value[0] = strtod(s, &end)
    return end[0] == 0 and not isnan(value[0])


cdef class LexBound:
    """One end of a lex range: `-` (below all), `+` (above all), `[x` or `(x`."""
    cdef int kind          # -1: `-`, 1: `+`, 0: a string
    cdef bytes text
    cdef bint exclusive

    cdef void fill(self, ZLexBound* b):
        """b as this end (b.s points into self.text: b lives no longer than self)."""
        b.kind = self.kind
        b.exclusive = self.exclusive
        b.s = NULL
        b.n = 0
        if self.text is not None:
            b.s = <const unsigned char*>PyBytes_AS_STRING(self.text)
            b.n = PyBytes_GET_SIZE(self.text)

    cdef int compare(self, LexBound other):
        if self.kind or other.kind:
            return (self.kind > other.kind) - (self.kind < other.kind)
        return (self.text > other.text) - (self.text < other.text)


cdef LexBound parse_lex_bound(bytes arg):
    cdef LexBound bound = LexBound()
    cdef Py_ssize_t n = PyBytes_GET_SIZE(arg)
    if n == 0:
        raise ResponseError(LEX_NOT_VALID)
    first = arg[0]
    if first == 43 or first == 45:            # '+' / '-' alone (up to a NUL)
        if n > 1 and arg[1] != 0:
            raise ResponseError(LEX_NOT_VALID)
        bound.kind = 1 if first == 43 else -1
        bound.exclusive = True
    elif first == 40 or first == 91:          # '(' / '['
        bound.text = arg[1:]
        bound.exclusive = first == 40
    else:
        raise ResponseError(LEX_NOT_VALID)
    return bound


cdef class RangeSpec:
    """A parsed ZRANGE-family range: ranks, scores or lex bounds, plus LIMIT."""
    cdef int by
    cdef bint reverse
    cdef int64_t start, end           # ranks
    cdef double low, high             # scores
    cdef bint low_ex, high_ex
    cdef LexBound lex_min, lex_max
    cdef int64_t offset, limit        # limit -1: all

    cdef void bounds(self, SortedSetValue zset, int64_t skip, int64_t* first, int64_t* stop):
        """The ranks [first, stop) of a score or lex range, before LIMIT (a lex range
        walked as Redis walks it with `skip` members offset; see lex_range)."""
        cdef ZLexBound low, high
        if self.by == BY_SCORE:
            zset.score_range(self.low, self.low_ex, self.high, self.high_ex, first, stop)
            return
        cdef int order = self.lex_min.compare(self.lex_max)
        if order > 0 or (order == 0 and (self.lex_min.exclusive or self.lex_max.exclusive)):
            first[0] = stop[0] = 0
            return
        self.lex_min.fill(&low)
        self.lex_max.fill(&high)
        zset.lex_range(&low, &high, self.reverse, skip, first, stop)

    cdef void window(self, SortedSetValue zset, int64_t* a, int64_t* b):
        """The ascending ranks [a, b) the range selects, LIMIT applied (a == b: none)."""
        cdef int64_t n = zset.size(), start, end, first, stop, count
        a[0] = b[0] = 0
        if self.by == BY_RANK:
            start, end = self.start, self.end
            if not rank_range(n, &start, &end):
                return
            if self.reverse:
                a[0], b[0] = n - 1 - end, n - start
            else:
                a[0], b[0] = start, end + 1
            return
        self.bounds(zset, self.offset, &first, &stop)
        if self.offset < 0:
            return
        count = stop - first - self.offset
        if self.limit >= 0 and self.limit < count:
            count = self.limit
        if count <= 0:
            return
        if self.reverse:
            a[0], b[0] = stop - self.offset - count, stop - self.offset
        else:
            a[0], b[0] = first + self.offset, first + self.offset + count

    cdef list select(self, SortedSetValue zset):
        """The (score, member) pairs of the range, in reply order."""
        cdef int64_t a, b
        self.window(zset, &a, &b)
        return zset.range_pairs(a, b, self.reverse)


cdef RangeSpec parse_range(list argv, Py_ssize_t at, bint store, int by, int reverse,
                           bint* withscores):
    """Redis's zrangeGenericCommand argument rules: argv[at] and argv[at+1] are the
    range, options follow. `by` BY_AUTO and `reverse` -1 mean "as the options say"."""
    cdef RangeSpec spec = RangeSpec()
    cdef Py_ssize_t j, argc = len(argv)
    cdef bint have_limit = False
    spec.offset = 0
    spec.limit = -1
    withscores[0] = False
    j = at + 2
    while j < argc:
        opt = argv[j]
        if not store and is_option(opt, b"withscores"):
            withscores[0] = True
        elif is_option(opt, b"limit") and argc - j - 1 >= 2:
            spec.offset = parse_int(argv[j + 1], NULL)
            spec.limit = parse_int(argv[j + 2], NULL)
            j += 2
        elif reverse < 0 and is_option(opt, b"rev"):
            reverse = 1
        elif by == BY_AUTO and is_option(opt, b"bylex"):
            by = BY_LEX
        elif by == BY_AUTO and is_option(opt, b"byscore"):
            by = BY_SCORE
        else:
            raise ResponseError(SYNTAX)
        j += 1
    spec.reverse = reverse > 0
    spec.by = BY_RANK if by == BY_AUTO else by
    if spec.limit != -1 and spec.by == BY_RANK:
        raise ResponseError("ERR syntax error, LIMIT is only supported in combination "
                            "with either BYSCORE or BYLEX")
    if withscores[0] and spec.by == BY_LEX:
        raise ResponseError("ERR syntax error, WITHSCORES not supported in combination "
                            "with BYLEX")
    low, high = argv[at], argv[at + 1]
    if spec.reverse and spec.by != BY_RANK:
        low, high = high, low                 # given as max, min
    if spec.by == BY_RANK:
        spec.start = parse_int(low, NULL)
        spec.end = parse_int(high, NULL)
    elif spec.by == BY_SCORE:
        if (not parse_score_bound(low, &spec.low, &spec.low_ex)
                or not parse_score_bound(high, &spec.high, &spec.high_ex)):
            raise ResponseError(RANGE_NOT_FLOAT)
    else:
        spec.lex_min = parse_lex_bound(low)
        spec.lex_max = parse_lex_bound(high)
    return spec


cdef object range_reply(CommandContext ctx, list argv, Py_ssize_t at, int by, int reverse):
    cdef bint withscores
    cdef RangeSpec spec = parse_range(argv, at, False, by, reverse, &withscores)
    cdef SortedSetValue zset = zset_at(ctx, argv[1])
    if zset is None:
        return []
    return pairs_reply(ctx, spec.select(zset), withscores, ctx.resp3)


def range_handler(int by, int reverse):
    """The handler of ZRANGE and its older forms: ranks, scores or lex (`by`), in
    `reverse` order (-1: ZRANGE's REV decides)."""
    def handler(CommandContext ctx, list argv):
        return range_reply(ctx, argv, 2, by, reverse)
    return handler


command("zrange")(range_handler(BY_AUTO, -1))
command("zrevrange")(range_handler(BY_RANK, 1))
command("zrangebyscore")(range_handler(BY_SCORE, 0))
command("zrevrangebyscore")(range_handler(BY_SCORE, 1))
command("zrangebylex")(range_handler(BY_LEX, 0))
command("zrevrangebylex")(range_handler(BY_LEX, 1))


cdef Py_ssize_t store_zset(CommandContext ctx, bytes dst, SortedSetValue stored,
                          bytes event) except -1:
    """ZRANGESTORE's and ZUNIONSTORE & co.'s end: `stored` replaces dst, TTL included
    (an empty set: dst is deleted); the effect is DEL plus the ZADDs of the stored set.
    Its size."""
    cdef Database db = ctx.db
    if stored.size() == 0:
        if db.lookup(dst, ctx.now) is not None:
            db.remove(dst)
            ctx.touch(dst, "g", b"del")
            ctx.propagate([b"DEL", dst])
        return 0
    db.persist(dst)
    db.store(dst, stored)
    ctx.touch(dst, "z", event)
    if ctx.logs():
        ctx.effects.append([b"DEL", dst])
        ctx.effects.extend(recreate_commands(dst, stored))
    return stored.size()


@command("zrangestore")
def zrangestore(CommandContext ctx, list argv):
    cdef bint withscores
    cdef RangeSpec spec = parse_range(argv, 3, True, BY_AUTO, -1, &withscores)
    cdef SortedSetValue source = zset_at(ctx, argv[2])
    return store_zset(ctx, argv[1], SortedSetValue.from_pairs(
        [] if source is None else spec.select(source), ctx.limits), b"zrangestore")


# -- adding and removing ---------------------------------------------------------------

cdef object add_members(CommandContext ctx, list argv, Py_ssize_t at, bint nx, bint xx,
                        bint gt, bint lt, bint ch, bint incr):
    """ZADD's work from argv[at] (score member pairs) on, flags parsed (zsetAdd)."""
    cdef bytes key = argv[1]
    cdef Py_ssize_t j, pairs = (len(argv) - at) // 2
    cdef double score, old
    cdef list scores = [parse_double(argv[at + 2 * j], NULL) for j in range(pairs)]
    cdef long long added = 0, updated = 0, processed = 0
    cdef list changed = []
    cdef bytes member
    cdef SortedSetValue zset = zset_at(ctx, key)
    if zset is None:
        if xx:
            return None if incr else 0
        # (7.0 picks the encoding by the first member's length alone)
        zset = new_zset(0, len(<bytes>argv[at + 1]), ctx.limits)
        ctx.db.store(key, zset)
    for j in range(pairs):
        member = argv[at + 2 * j + 1]
        score = scores[j]
        if zset.get_score(member, PyBytes_GET_SIZE(member), &old):
            if nx:
                continue
            if incr:
                score += old
                if isnan(score):
                    raise ResponseError(NAN_SCORE)
            if (lt and score >= old) or (gt and score <= old):
                continue
            processed += 1
            if score != old:
                zset.set_score(member, PyBytes_GET_SIZE(member), score, ctx.limits)
                updated += 1
                changed.append((score, member))
        elif not xx:
            zset.set_score(member, PyBytes_GET_SIZE(member), score, ctx.limits)
            added += 1
            processed += 1
            changed.append((score, member))
    if changed:
        ctx.db.resized(key)
        ctx.touch(key, "z", b"zincr" if incr else b"zadd")
        if ctx.logs(added + updated):
            effect = [b"ZADD", key]
            for score, member in changed:
                effect.append(format_score(score))
                effect.append(member)
            ctx.effects.append(effect)
    if incr:
        return score_reply(ctx, score) if processed else None
    return added + updated if ch else added


@command("zadd")
def zadd(CommandContext ctx, list argv):
    cdef Py_ssize_t at = 2, argc = len(argv)
    cdef bint nx = 0, xx = 0, gt = 0, lt = 0, ch = 0, incr = 0
    while at < argc:
        opt = argv[at]
        if is_option(opt, b"nx"):
            nx = 1
        elif is_option(opt, b"xx"):
            xx = 1
        elif is_option(opt, b"ch"):
            ch = 1
        elif is_option(opt, b"incr"):
            incr = 1
        elif is_option(opt, b"gt"):
            gt = 1
        elif is_option(opt, b"lt"):
            lt = 1
        else:
            break
        at += 1
    elements = argc - at
    if elements == 0 or elements % 2:
        raise ResponseError(SYNTAX)
    if nx and xx:
        raise ResponseError("ERR XX and NX options at the same time are not compatible")
    if (gt and nx) or (lt and nx) or (gt and lt):
        raise ResponseError("ERR GT, LT, and/or NX options at the same time are not compatible")
    if incr and elements > 2:
        raise ResponseError("ERR INCR option supports a single increment-element pair")
    return add_members(ctx, argv, at, nx, xx, gt, lt, ch, incr)


@command("zincrby")
def zincrby(CommandContext ctx, list argv):
    return add_members(ctx, argv, 2, 0, 0, 0, 0, 0, 1)


@command("zrem")
def zrem(CommandContext ctx, list argv):
    return remove_each(ctx, argv, zset_at(ctx, argv[1]), SortedSetValue.discard, "z",
                       b"zrem")


cdef object remove_range(CommandContext ctx, list argv, int by, bytes event):
    cdef bint withscores
    cdef bytes key = argv[1]
    cdef RangeSpec spec = parse_range(argv[:4], 2, True, by, 0, &withscores)
    cdef SortedSetValue zset = zset_at(ctx, key)
    cdef int64_t a, b, removed
    if zset is None:
        return 0
    spec.window(zset, &a, &b)
    removed = zset.remove_ranks(a, b)
    if removed:
        ctx.touch(key, "z", event)
        settle(ctx, key, zset)
        if ctx.logs(removed):
            ctx.effects.append(list(argv))
    return removed


def remove_range_handler(int by, bytes event):
    """The handler of ZREMRANGEBYRANK/SCORE/LEX (`by`), whose keyspace event is `event`."""
    def handler(CommandContext ctx, list argv):
        return remove_range(ctx, argv, by, event)
    return handler


command("zremrangebyrank")(remove_range_handler(BY_RANK, b"zremrangebyrank"))
command("zremrangebyscore")(remove_range_handler(BY_SCORE, b"zremrangebyscore"))
command("zremrangebylex")(remove_range_handler(BY_LEX, b"zremrangebylex"))


# -- single-member and counting queries ------------------------------------------------

@command("zscore")
def zscore(CommandContext ctx, list argv):
    cdef SortedSetValue zset = zset_at(ctx, argv[1])
    cdef bytes member = argv[2]
    cdef double score
    if zset is None or not zset.get_score(member, PyBytes_GET_SIZE(member), &score):
        return None
    return score_reply(ctx, score)


@command("zmscore")
def zmscore(CommandContext ctx, list argv):
    cdef SortedSetValue zset = zset_at(ctx, argv[1])
    cdef list out = []
    cdef bytes member
    cdef double score
    for member in argv[2:]:
        if zset is None or not zset.get_score(member, PyBytes_GET_SIZE(member), &score):
            out.append(None)
        else:
            out.append(score_reply(ctx, score))
    return out


command("zcard")(length_handler(SortedSetValue))


cdef object count_range(CommandContext ctx, list argv, int by):
    cdef bint withscores
    cdef RangeSpec spec = parse_range(argv, 2, True, by, 0, &withscores)
    cdef SortedSetValue zset = zset_at(ctx, argv[1])
    cdef int64_t first, stop
    if zset is None:
        return 0
    spec.bounds(zset, -1, &first, &stop)
    return stop - first


@command("zcount")
def zcount(CommandContext ctx, list argv):
    return count_range(ctx, argv, BY_SCORE)


@command("zlexcount")
def zlexcount(CommandContext ctx, list argv):
    return count_range(ctx, argv, BY_LEX)


cdef object rank_reply(CommandContext ctx, list argv, bint reverse):
    """ZRANK/ZREVRANK, with Redis 7.2's WITHSCORE."""
    cdef bint withscore = False
    if len(argv) > 4:
        raise ResponseError(f"ERR wrong number of arguments for '{argv[0].decode('utf-8', 'replace').lower()}' command")
    if len(argv) == 4:
        if not is_option(argv[3], b"withscore"):
            raise ResponseError(SYNTAX)
        withscore = True
    cdef SortedSetValue zset = zset_at(ctx, argv[1])
    cdef bytes member = argv[2]
    cdef int64_t rank = -1
    if zset is not None:
        rank = zset.rank_of(member, PyBytes_GET_SIZE(member))
    if rank < 0:
        ctx.null_array = withscore
        return None
    cdef int64_t reply = zset.size() - 1 - rank if reverse else rank
    if withscore:
        return [reply, score_reply(ctx, zset.score_at(rank))]
    return reply


@command("zrank")
def zrank(CommandContext ctx, list argv):
    return rank_reply(ctx, argv, False)


@command("zrevrank")
def zrevrank(CommandContext ctx, list argv):
    return rank_reply(ctx, argv, True)


# -- pops ----------------------------------------------------------------------------------

cdef list pop_pairs(CommandContext ctx, bytes key, SortedSetValue zset, bint from_max,
                    int64_t count):
    """Pops up to count pairs of the set at key (non-empty), with event, removal of an
    emptied key and the effect `ZPOPMIN|ZPOPMAX key n`."""
    cdef int64_t n = zset.size()
    cdef list popped
    if count > n:
        count = n
    if from_max:
        popped = zset.range_pairs(n - count, n, True)
        zset.remove_ranks(n - count, n)
    else:
        popped = zset.range_pairs(0, count, False)
        zset.remove_ranks(0, count)
    ctx.touch(key, "z", b"zpopmax" if from_max else b"zpopmin")
    settle(ctx, key, zset)
    if ctx.logs(len(popped)):
        ctx.effects.append([b"ZPOPMAX" if from_max else b"ZPOPMIN", key,
                            str(len(popped)).encode()])
    return popped


cdef object zpop(CommandContext ctx, list argv, bint from_max):
    cdef int64_t count = -1
    if len(argv) > 3:
        raise ResponseError(SYNTAX)
    if len(argv) == 3:
        count = parse_int_range(argv[2], 0, INT64_MAX,
                                b"ERR value is out of range, must be positive")
    cdef bytes key = argv[1]
    cdef SortedSetValue zset = zset_at(ctx, key)
    if zset is None or count == 0:
        return []
    popped = pop_pairs(ctx, key, zset, from_max, 1 if count < 0 else count)
    return pairs_reply(ctx, popped, True, ctx.resp3 and count >= 0)


@command("zpopmin")
def zpopmin(CommandContext ctx, list argv):
    return zpop(ctx, argv, False)


@command("zpopmax")
def zpopmax(CommandContext ctx, list argv):
    return zpop(ctx, argv, True)


cdef tuple first_nonempty(CommandContext ctx, list keys):
    """The first key holding a sorted set, and the set; WRONGTYPE stops the search at a
    key of another type (as Redis checks keys in order)."""
    cdef SortedSetValue zset
    for key in keys:
        zset = zset_at(ctx, key)
        if zset is not None and zset.size():
            return key, zset
    return None, None


cdef object bzpop(CommandContext ctx, list argv, bint from_max):
    cdef int64_t timeout = block_timeout(ctx, argv[len(argv) - 1])
    cdef list keys = argv[1:len(argv) - 1]
    key, zset = first_nonempty(ctx, keys)
    if key is None:
        return block_or_nil(ctx, keys, timeout, argv, b"zset", True)
    score, member = pop_pairs(ctx, key, zset, from_max, 1)[0]
    return [key, member, score_reply(ctx, score)]


@command("bzpopmin")
def bzpopmin(CommandContext ctx, list argv):
    return bzpop(ctx, argv, False)


@command("bzpopmax")
def bzpopmax(CommandContext ctx, list argv):
    return bzpop(ctx, argv, True)


cdef object mpop(CommandContext ctx, list argv, Py_ssize_t numkeys_at, bint blocking):
    """ZMPOP/BZMPOP from argv[numkeys_at] on."""
    cdef bint from_max
    cdef int64_t count
    cdef list keys = mpop_args(argv, numkeys_at, b"min", b"max", &from_max, &count)
    cdef int64_t timeout = block_timeout(ctx, argv[1]) if blocking else 0   # checked last
    key, zset = first_nonempty(ctx, keys)
    if key is None:
        if blocking:
            return block_or_nil(ctx, keys, timeout, argv, b"zset", True)
        ctx.null_array = True
        return None
    return [key, pairs_reply(ctx, pop_pairs(ctx, key, zset, from_max, count), True, True)]


@command("zmpop")
def zmpop(CommandContext ctx, list argv):
    return mpop(ctx, argv, 1, False)


@command("bzmpop")
def bzmpop(CommandContext ctx, list argv):
    return mpop(ctx, argv, 2, True)


# -- random members and scanning ------------------------------------------------------------

@command("zrandmember")
def zrandmember(CommandContext ctx, list argv):
    cdef int64_t count
    cdef bint withscores = False
    cdef Py_ssize_t argc = len(argv)
    cdef SortedSetValue zset
    cdef int64_t n
    if argc < 3:
        zset = zset_at(ctx, argv[1])
        return None if zset is None else zset.member_at(random.randrange(zset.size()))
    count = random_count(argv[2])
    if argc > 4 or (argc == 4 and not is_option(argv[3], b"withscores")):
        raise ResponseError(SYNTAX)
    if argc == 4:
        withscores = True
        if count < -INT64_MAX // 2 or count > INT64_MAX // 2:
            raise ResponseError("ERR value is out of range")
    zset = zset_at(ctx, argv[1])
    if zset is None or count == 0:
        return []
    n = zset.size()
    if count < 0:
        check_repeats(-count, zset, 24 if withscores else 0)
        pairs = [zset.at(random.randrange(n)) for _ in range(-count)]
    elif count >= n:
        pairs = zset.range_pairs(0, n, True)    # the whole set, from the top as Redis
    else:
        pairs = [zset.at(i) for i in random.sample(range(n), count)]
    return pairs_reply(ctx, pairs, withscores, ctx.resp3)


@command("zscan")
def zscan(CommandContext ctx, list argv):
    """Every matching member with its score, cursor 0 (see collection.pyx)."""
    parse_cursor(argv[2])
    cdef SortedSetValue zset = zset_at(ctx, argv[1])
    cdef list items = None
    if zset is not None:
        items = []
        for score, member in zset.range_pairs(0, zset.size(), False):
            items.append(member)
            items.append(score_text(score))
    return scan_items(argv, items, True, False)


# -- unions, intersections and differences -------------------------------------------------

cdef list source_values(CommandContext ctx, list keys):
    """The sources of a combination: sorted sets, sets (each member scores 1) or None
    (no key); WRONGTYPE for any other type."""
    cdef list values = []
    for key in keys:
        value = ctx.db.lookup(key, ctx.now)
        if value is not None and type(value) is not SortedSetValue and type(value) is not SetValue:
            raise ResponseError(WRONGTYPE)
        values.append(value)
    return values


cdef class CombineArgs:
    """What ZUNION & co. were asked (Redis's zunionInterDiffGenericCommand's parse): the
    sources at the key count's place, then WEIGHTS and AGGREGATE but for ZDIFF and
    ZINTERCARD, WITHSCORES for the replying forms, LIMIT for ZINTERCARD."""
    cdef list values
    cdef list weights
    cdef int how
    cdef int64_t limit
    cdef bint withscores

    def __init__(self, CommandContext ctx, list argv, Py_ssize_t numkeys_at, int op, str name,
                 bint store, bint card):
        cdef int64_t setnum = parse_int(argv[numkeys_at], NULL)
        cdef Py_ssize_t j, i, argc = len(argv), remaining
        cdef bint scored = op != OP_DIFF and not card
        if setnum < 1:
            raise ResponseError(f"ERR at least 1 input key is needed for '{name}' command")
        if setnum > argc - numkeys_at - 1:
            raise ResponseError(SYNTAX)
        self.values = source_values(ctx, argv[numkeys_at + 1:numkeys_at + 1 + setnum])
        self.weights = [1.0] * setnum
        self.how = AGGREGATE_SUM
        j = numkeys_at + 1 + setnum
        while j < argc:
            remaining = argc - j
            if scored and remaining >= setnum + 1 and is_option(argv[j], b"weights"):
                for i in range(setnum):
                    self.weights[i] = parse_double(argv[j + 1 + i],
                                                   b"ERR weight value is not a float")
                j += setnum + 1
            elif scored and remaining >= 2 and is_option(argv[j], b"aggregate"):
                if is_option(argv[j + 1], b"sum"):
                    self.how = AGGREGATE_SUM
                elif is_option(argv[j + 1], b"min"):
                    self.how = AGGREGATE_MIN
                elif is_option(argv[j + 1], b"max"):
                    self.how = AGGREGATE_MAX
                else:
                    raise ResponseError(SYNTAX)
                j += 2
            elif not store and not card and is_option(argv[j], b"withscores"):
                self.withscores = True
                j += 1
            elif card and remaining >= 2 and is_option(argv[j], b"limit"):
                self.limit = parse_int_range(argv[j + 1], 0, INT64_MAX,
                                             b"ERR LIMIT can't be negative")
                j += 2
            else:
                raise ResponseError(SYNTAX)


cdef object combine_reply(CommandContext ctx, list argv, int op, str name):
    """ZUNION, ZINTER, ZDIFF: the result by (score, member), as Redis's skiplist
    orders it."""
    cdef CombineArgs args = CombineArgs(ctx, argv, 1, op, name, False, False)
    cdef SortedSetValue result = combine_values(args.values, args.weights, op, args.how, True,
                                                ctx.limits)
    return pairs_reply(ctx, result.range_pairs(0, result.size(), False), args.withscores,
                       ctx.resp3)


cdef object combine_store(CommandContext ctx, list argv, int op, str name):
    """ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE: the result replaces argv[1] (store_zset)."""
    cdef CombineArgs args = CombineArgs(ctx, argv, 2, op, name, True, False)
    return store_zset(ctx, argv[1], combine_values(args.values, args.weights, op, args.how,
                                                   False, ctx.limits), name.encode())


def combine_handler(int op, str name, bint store):
    """The handler of ZUNION/ZINTER/ZDIFF (`op`) and, when `store`, of their STORE forms."""
    def handler(CommandContext ctx, list argv):
        if store:
            return combine_store(ctx, argv, op, name)
        return combine_reply(ctx, argv, op, name)
    return handler


command("zunion")(combine_handler(OP_UNION, "zunion", False))
command("zinter")(combine_handler(OP_INTER, "zinter", False))
command("zdiff")(combine_handler(OP_DIFF, "zdiff", False))
command("zunionstore")(combine_handler(OP_UNION, "zunionstore", True))
command("zinterstore")(combine_handler(OP_INTER, "zinterstore", True))
command("zdiffstore")(combine_handler(OP_DIFF, "zdiffstore", True))


@command("zintercard")
def zintercard(CommandContext ctx, list argv):
    cdef CombineArgs args = CombineArgs(ctx, argv, 1, OP_INTER, "zintercard", False, True)
    return intersection_size(args.values, args.limit)
