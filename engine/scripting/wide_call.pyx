# cython: language_level=3
"""redis.call and redis.pcall as Lua C functions, so they take as many arguments as
Redis's do.

Lupa calls a Python object from Lua only after checking for two free slots on the Lua
C stack (Lua 5.1 allows 8,000 in one call), which leaves a Python callable 7,997
arguments where Redis's C function takes 8,001: `redis.call('rpush', k, unpack(t))`
with 7,999 values would fail. The C closure made here stands between the script and
the Python callable: a call with few arguments goes on to it unchanged, one with many
reaches the callable's `packed` twin as (count, table of the arguments). Being a C
function it keeps the script's frame on tail calls, so errors still point at the
script's line. Its Lua API functions are lupa's own (Lua 5.1 is linked into lupa's
module and exports its API), found with dlsym; `package.loadlib` hands the opener to
the interpreter.
"""

cdef extern from *:
    """
    #include <dlfcn.h>
    #include <stddef.h>

    typedef struct lua_State lua_State;
    typedef int (*sluice_lua_CFunction)(lua_State*);

    #define SLUICE_UPVALUE(i) (-10002 - (i))   /* Lua 5.1's lua_upvalueindex */
    #define SLUICE_MULTRET (-1)
    /* Calls with at most this many arguments go to the Python callable as they are
       (it is called with one more value, itself, and lupa wants two free slots). */
    #define SLUICE_DIRECT_MAX 7990

    static int (*sl_gettop)(lua_State*);
    static void (*sl_pushvalue)(lua_State*, int);
    static void (*sl_insert)(lua_State*, int);
    static void (*sl_call)(lua_State*, int, int);
    static void (*sl_createtable)(lua_State*, int, int);
    static void (*sl_rawseti)(lua_State*, int, int);
    static void (*sl_pushinteger)(lua_State*, ptrdiff_t);
    static void (*sl_pushcclosure)(lua_State*, sluice_lua_CFunction, int);

    static int sluice_wide_call(lua_State* L) {
        int n = sl_gettop(L), i;
        if (n <= SLUICE_DIRECT_MAX) {
            sl_pushvalue(L, SLUICE_UPVALUE(1));
            sl_insert(L, 1);
            sl_call(L, n, SLUICE_MULTRET);
            return sl_gettop(L);
        }
        sl_createtable(L, n, 0);
        for (i = 1; i <= n; i++) {
            sl_pushvalue(L, i);
            sl_rawseti(L, n + 1, i);
        }
        sl_pushvalue(L, SLUICE_UPVALUE(2));
        sl_pushinteger(L, n);
        sl_pushvalue(L, n + 1);
        sl_call(L, 2, SLUICE_MULTRET);
        return sl_gettop(L) - (n + 1);
    }

    /* opener(callable, packed) -> the C closure over both */
    __attribute__((visibility("default"))) int sluice_wide_call_open(lua_State* L) {
        sl_pushcclosure(L, sluice_wide_call, 2);
        return 1;
    }

    static int sl_find(void* handle, void** slot, const char* name) {
        *slot = dlsym(handle, name);
        return *slot != NULL;
    }
    static const char* sluice_wide_call_resolve(const char* lua_module) {
        void* handle = dlopen(lua_module, RTLD_NOW | RTLD_NOLOAD);
        if (handle == NULL) return "lupa's Lua 5.1 module is not loaded";
        if (sl_find(handle, (void**)&sl_gettop, "lua_gettop")
                && sl_find(handle, (void**)&sl_pushvalue, "lua_pushvalue")
                && sl_find(handle, (void**)&sl_insert, "lua_insert")
                && sl_find(handle, (void**)&sl_call, "lua_call")
                && sl_find(handle, (void**)&sl_createtable, "lua_createtable")
                && sl_find(handle, (void**)&sl_rawseti, "lua_rawseti")
                && sl_find(handle, (void**)&sl_pushinteger, "lua_pushinteger")
                && sl_find(handle, (void**)&sl_pushcclosure, "lua_pushcclosure"))
            return NULL;
        return "lupa's Lua 5.1 module does not export the Lua API";
    }
    """
    const char* sluice_wide_call_resolve(const char* lua_module)

import lupa.lua51

cdef bytes _lua_module = lupa.lua51.__file__.encode()
cdef const char* _missing = sluice_wide_call_resolve(_lua_module)
if _missing != NULL:
    raise ImportError(_missing.decode())

OPENER = b"sluice_wide_call_open"
"""The symbol `package.loadlib(__file__, OPENER)` gives the interpreter."""
