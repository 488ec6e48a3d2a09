# A walk over the members of a collection in C (SetValue.visit, SortedSetValue.visit):
# the callback gets each member's bytes and score (1 for a set's member) and returns 0
# to go on, 1 to stop, -1 with an exception set. It must not change the collection.
ctypedef int (*MemberFn)(void* ctx, const unsigned char* s, size_t n, double score) except -1
