"""Small collections to and from the bytes their key's entry keeps (see packed.pxd):
one allocation per small key, where a value object and its buffer are two, and the
object itself (48 to 80 bytes) is not kept."""
from libc.string cimport memcpy

from engine.core.hash_value cimport HashValue, hash_of_listpack
from engine.core.intset cimport IntSet, is_bytes
from engine.core.list_value cimport ListValue, list_of_listpack
from engine.core.listpack cimport lp_bytes
from engine.core.memory cimport mem_alloc
from engine.core.set_value cimport (SetValue, SET_INTSET, SET_LISTPACK, set_of_intset,
                                    set_of_listpack)
from engine.core.sorted_set cimport SortedSetValue, zset_of_listpack


cdef int packed_form(object value, const unsigned char** p, size_t* n) noexcept:
    cdef type cls = type(value)
    cdef ListValue lv
    cdef SetValue sv
    cdef int kind
    if cls is HashValue:
        p[0] = (<HashValue>value).lp
        kind = PACKED_HASH
    elif cls is SetValue:
        sv = <SetValue>value
        if sv.kind == SET_INTSET:
            p[0] = <const unsigned char*>sv.d.ints
            n[0] = is_bytes(sv.d.ints)
            return PACKED_INTSET
        p[0] = sv.d.lp if sv.kind == SET_LISTPACK else NULL
        kind = PACKED_SET_LISTPACK
    elif cls is SortedSetValue:
        p[0] = (<SortedSetValue>value).lp
        kind = PACKED_ZSET
    elif cls is ListValue:
        lv = <ListValue>value
        p[0] = (lv.head.lp if not lv.quick and lv.head != NULL and lv.head.raw_len == 0
                else NULL)
        kind = PACKED_LIST
    else:
        return 0
    if p[0] == NULL:
        return 0
    n[0] = lp_bytes(p[0])
    return kind


cdef object unpacked(int kind, const unsigned char* p, size_t n):
    cdef unsigned char* copy = <unsigned char*>mem_alloc(n)
    memcpy(copy, p, n)
    if kind == PACKED_LIST:
        return list_of_listpack(copy)
    if kind == PACKED_HASH:
        return hash_of_listpack(copy)
    if kind == PACKED_INTSET:
        return set_of_intset(<IntSet*>copy)
    if kind == PACKED_SET_LISTPACK:
        return set_of_listpack(copy)
    return zset_of_listpack(copy)
