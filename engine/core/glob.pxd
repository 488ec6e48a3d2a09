# Redis's glob-style pattern matching (util.c stringmatchlen) over bytes: used by
# KEYS, SCAN MATCH and PSUBSCRIBE.

# 1 if string[0:slen] matches pattern[0:plen]; nocase folds ASCII A-Z only.
cdef bint stringmatchlen(const char* pattern, Py_ssize_t plen, const char* string,
                         Py_ssize_t slen, bint nocase) noexcept
# The same over bytes objects.
cpdef bint match(bytes pattern, bytes string, bint nocase=*)
