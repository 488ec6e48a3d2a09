"""ZUNION, ZINTER, ZDIFF (and their STORE forms, ZINTERCARD) over C memory (see
zset_combine.pxd): the sources are walked with their `visit` and looked up with their
own C lookups, the scores gathered in a C hash table (member -> double), and the
result built from it; unions and intersections go from the smallest source to the
largest, as Redis orders them (which fixes the order of a float sum)."""
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.object cimport PyObject
from libc.math cimport isnan
from libc.stdint cimport int64_t
from libc.string cimport memcpy

from engine.core.encoding_limits cimport EncodingLimits
from engine.core.hashtable cimport (
    HEntry, HIter, HTable, ht_count, ht_find, ht_free, ht_iter_init, ht_iter_next, ht_key,
    ht_new, ht_set, ht_value)
from engine.core.members cimport MemberFn
from engine.core.set_value cimport SetValue
from engine.core.sorted_set cimport SortedSetValue, new_zset


cdef struct Source:
    PyObject* value                  # borrowed from the caller's list
    bint scored                      # a sorted set (else a set)
    double weight
    int64_t size


cdef struct Combine:
    HTable* acc                      # member -> double; NULL when only counting
    Source* others                   # where an intersection or difference looks members up
    Py_ssize_t nothers
    double weight                    # of the source walked
    int how
    int64_t limit                    # stop after this many (0: never)
    int64_t count
    size_t longest                   # the longest member gathered


cdef inline double weighted(double score, double weight) noexcept:
    """A source's score times its weight; inf * 0 counts as 0, as in Redis."""
    cdef double value = score * weight
    return 0.0 if isnan(value) else value


cdef inline double aggregate(double total, double value, int how) noexcept:
    """Redis's zunionInterAggregate: SUM (inf + -inf counts as 0), MIN or MAX."""
    if how == AGGREGATE_SUM:
        total += value
        return 0.0 if isnan(total) else total
    if how == AGGREGATE_MIN:
        return value if value < total else total
    return value if value > total else total


cdef bint score_in(const Source* src, const unsigned char* s, size_t n, double* out):
    """Whether member s is in src, its score in out."""
    if src.scored:
        return (<SortedSetValue><object>src.value).get_score(s, n, out)
    out[0] = 1.0
    return (<SetValue><object>src.value).has(s, n)


cdef int visit(const Source* src, MemberFn fn, Combine* c) except -1:
    c.weight = src.weight
    if src.scored:
        return (<SortedSetValue><object>src.value).visit(fn, c)
    return (<SetValue><object>src.value).visit(fn, c)


cdef int gather(Combine* c, const unsigned char* s, size_t n, double score) except -1:
    """Records a member of the result (new to it); 1 once the limit is reached."""
    c.count += 1
    if c.acc != NULL:
        ht_set(c.acc, s, n, <const unsigned char*>&score, sizeof(double))
        if n > c.longest:
            c.longest = n
    return 1 if c.limit and c.count >= c.limit else 0


cdef int add_union(void* ctx, const unsigned char* s, size_t n, double score) except -1:
    cdef Combine* c = <Combine*>ctx
    cdef HEntry* e = ht_find(c.acc, s, n)
    cdef double total
    score = weighted(score, c.weight)
    if e == NULL:
        return gather(c, s, n, score)
    memcpy(&total, ht_value(c.acc, e), sizeof(double))
    total = aggregate(total, score, c.how)
    memcpy(<unsigned char*>ht_value(c.acc, e), &total, sizeof(double))
    return 0


cdef int add_if_in_all(void* ctx, const unsigned char* s, size_t n, double score) except -1:
    cdef Combine* c = <Combine*>ctx
    cdef double other
    cdef Py_ssize_t i
    score = weighted(score, c.weight)
    for i in range(c.nothers):
        if not score_in(&c.others[i], s, n, &other):
            return 0
        score = aggregate(score, other * c.others[i].weight, c.how)
    return gather(c, s, n, score)


cdef int add_if_in_none(void* ctx, const unsigned char* s, size_t n, double score) except -1:
    cdef Combine* c = <Combine*>ctx
    cdef double other
    cdef Py_ssize_t i
    for i in range(c.nothers):
        if score_in(&c.others[i], s, n, &other):
            return 0
    return gather(c, s, n, score)


cdef Source* sources_of(list values, list weights, bint by_size) except NULL:
    """The values as Sources (missing ones first when by_size, as they are empty), in
    their order or stably from the smallest to the largest."""
    cdef Py_ssize_t k = len(values), i, j
    cdef Source* src = <Source*>PyMem_Malloc(max(k, 1) * sizeof(Source))
    cdef Source item
    if src == NULL:
        raise MemoryError()
    for i in range(k):
        value = values[i]
        src[i].value = <PyObject*>value
        src[i].scored = type(value) is SortedSetValue
        src[i].weight = 1.0 if weights is None else weights[i]
        src[i].size = 0 if value is None else len(value)
    if by_size:                      # insertion sort: stable, and the key count is small
        for i in range(1, k):
            item = src[i]
            j = i
            while j > 0 and src[j - 1].size > item.size:
                src[j] = src[j - 1]
                j -= 1
            src[j] = item
    return src


cdef int run(Combine* c, list values, list weights, int op) except -1:
    """Walks the sources for `op`, gathering the result in c."""
    cdef Py_ssize_t k = len(values), i, kept = 0
    cdef Source* src = sources_of(values, weights, op != OP_DIFF)
    try:
        if op == OP_UNION:
            for i in range(k):
                if src[i].value != <PyObject*>None:
                    visit(&src[i], add_union, c)
        elif op == OP_INTER:
            if src[0].size == 0:           # the smallest: a missing or empty source
                return 0
            c.others = src + 1
            c.nothers = k - 1
            visit(&src[0], add_if_in_all, c)
        else:
            if src[0].value == <PyObject*>None:
                return 0
            for i in range(1, k):          # missing sources hold nothing to take away
                if src[i].value != <PyObject*>None:
                    src[1 + kept] = src[i]
                    kept += 1
            c.others = src + 1
            c.nothers = kept
            visit(&src[0], add_if_in_none, c)
    finally:
        PyMem_Free(src)
    return 0


cdef SortedSetValue combine_values(list values, list weights, int op, int how, bint reply,
                                   EncodingLimits limits):
    cdef Combine c
    cdef SortedSetValue out
    cdef HIter it
    cdef HEntry* e
    cdef double score
    c.acc = ht_new(True)
    c.others = NULL
    c.nothers = 0
    c.how = how
    c.limit = 0
    c.count = 0
    c.longest = 0
    try:
        run(&c, values, weights, op)
        out = new_zset(ht_count(c.acc), c.longest, limits)
        if reply and out.lp != NULL:
            out.convert()
        ht_iter_init(c.acc, &it)
        e = ht_iter_next(c.acc, &it)
        while e != NULL:
            memcpy(&score, ht_value(c.acc, e), sizeof(double))
            out.set_score(ht_key(c.acc, e), e.klen, score, limits)
            e = ht_iter_next(c.acc, &it)
    finally:
        ht_free(c.acc)
    return out


cdef int64_t intersection_size(list values, int64_t limit) except -1:
    cdef Combine c
    c.acc = NULL
    c.others = NULL
    c.nothers = 0
    c.how = AGGREGATE_SUM
    c.limit = limit
    c.count = 0
    c.longest = 0
    run(&c, values, None, OP_INTER)
    return c.count
