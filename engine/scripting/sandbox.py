"""The Lua side of the sandbox: the globals a script sees, read-only as Redis keeps them.

Redis patches its Lua to mark tables read-only; stock Lua 5.1 (lupa's) has no such flag, so
every protected table is reached through an empty proxy whose metatable forwards reads and
refuses writes. The raw-access functions (rawset, rawget, next, pairs, getmetatable,
setmetatable) see through the proxies, so a script cannot tell the difference in the ways Redis
7.0 lets it look. The chunk runs once per runtime with the full standard library, keeps what
it needs in locals, and returns the functions the Python side drives.

Everything a script calls into Python is a Python callable, which Lua runs as a C function:
a script's `return redis.call(...)` then keeps its own frame (a Lua wrapper would be a tail
call and lose the line the error handler reports).
"""

HOOK_COUNT = 100_000
"""Lua instructions between two calls of the count hook (Redis's figure)."""

SANDBOX_SOURCE = r"""
local hooks = ...
local debug_getinfo, setfenv, loadstring, xpcall = debug.getinfo, setfenv, loadstring, xpcall
local error, type, tostring, pcall = error, type, tostring, pcall
local rawget, rawset, next = rawget, rawset, next
local getmetatable, setmetatable = getmetatable, setmetatable
local READONLY = 'Attempt to modify a readonly table'
local INTERNAL = '=sluice'
local table_concat = table.concat

local behind = setmetatable({}, {__mode = 'k'})   -- proxy -> the table it guards

local function refuse_write() error(READONLY, 2) end

local function protect(t)
  local proxy = setmetatable({}, {__index = t, __newindex = refuse_write})
  behind[proxy] = t
  return proxy
end

-- A Python function fails by raising LuaRaise; Lua sees the exception object, and these
-- turn it into the value Redis's C code would have raised (a string, or {err=...}).
local error_value = hooks.error_value
local function plain(err)
  if type(err) == 'userdata' then return error_value(err) end
  return err
end
-- Redis's pcall hands a script the text of an {err=...} error, not the table.
local function settle(ok, ...)
  if ok then return ok, ... end
  local err = plain((...))
  if type(err) == 'table' and type(rawget(err, 'err')) == 'string' then err = err.err end
  return false, err
end

-- A base function's own errors, raised as if the script had called it directly: argument
-- errors name the function and point at the script's line, the others point nowhere.
local function as_caller(name, ok, ...)
  if ok then return ... end
  local msg = (...)
  if msg:sub(1, 13) ~= 'bad argument ' then error(msg, 0) end
  error((msg:gsub("to '%?'", "to '" .. name .. "'", 1)), 3)
end

local G = {}
for _, name in ipairs({'assert', 'collectgarbage', 'error', 'gcinfo', 'ipairs', 'load',
                       'loadstring', 'pcall', 'rawequal', 'select', 'tonumber', 'tostring',
                       'type', 'unpack', 'xpcall', '_VERSION'}) do
  G[name] = _G[name]
end
G.pcall = function(f, ...) return settle(pcall(f, ...)) end

-- Chunks a script compiles run in the sandbox too (a new chunk would otherwise get the real
-- globals). Precompiled bytecode is refused: Redis's Lua parses it as text, so its first byte
-- is an unexpected symbol; the message is made the same way, with another such byte.
local globals
local function binary_refused(chunkname)
  local _, msg = loadstring('\1', chunkname)
  return nil, (msg:gsub("'char%(1%)'$", "'char(27)'"))
end
local function sandboxed(fn, ...)
  if fn then setfenv(fn, globals) end
  return fn, ...
end
G.loadstring = function(s, name)
  if type(s) == 'string' and s:byte(1) == 27 then return binary_refused(name or s) end
  return sandboxed(loadstring(s, name))
end
G.load = function(reader, name)
  local parts = {}
  while true do
    local part = reader()
    if part == nil or part == '' then break end
    if #parts == 0 and part:byte(1) == 27 then return binary_refused(name or '=(load)') end
    parts[#parts + 1] = part
  end
  return G.loadstring(table_concat(parts), name or '=(load)')
end
-- A script stopped by the count hook runs no handler of its own: Lua runs the handler
-- with hooks off when the error came from a hook, so a handler that loops would never end.
local stopped = false
G.xpcall = function(f, handler)
  return xpcall(f, function(err)
    if stopped then return err end
    return handler(plain(err))
  end)
end

G.next = function(t, k)
  local key, value = as_caller('next', pcall(next, behind[t] or t, k))
  return key, value
end
local see_through_next = G.next
G.pairs = function(t) return see_through_next, t, nil end
G.rawget = function(t, k)
  local value = as_caller('rawget', pcall(rawget, behind[t] or t, k))
  return value
end
G.rawset = function(t, k, v)
  if behind[t] then error(READONLY, 0) end
  local result = as_caller('rawset', pcall(rawset, t, k, v))
  return result
end
-- the metatables a script can reach (the globals' and strings') are read-only as well
local guarded_meta = {}
G.getmetatable = function(t)
  local mt = getmetatable(behind[t] or t)
  return guarded_meta[mt] or mt
end
G.setmetatable = function(t, mt)
  if behind[t] then error(READONLY, 0) end
  local result = as_caller('setmetatable', pcall(setmetatable, t, mt))
  return result
end

-- Long scripts: every hooks.hook_count instructions the count hook asks Python whether the
-- script must stop (killed, or a library's load past its time; Python also serves the
-- server's other clients there once the script runs past busy-reply-threshold). A stopped
-- script fails at once, then at every line it reaches, so that a pcall cannot catch the
-- stop for good; `arm` restores the count hook. A hook set from Lua belongs to one thread:
-- every coroutine gets its own when it is made.
local sethook, tick, HOOK_COUNT = debug.sethook, hooks.tick, hooks.hook_count
local function on_hook()
  local stop = tick()
  if stop then
    stopped = true
    sethook(on_hook, 'l')
    error({err = 'ERR ' .. stop}, 0)
  end
end
local function arm()
  stopped = false
  sethook(on_hook, '', HOOK_COUNT)
end
if tick then arm() end

local coroutine_lib = {}
for k, v in next, coroutine do coroutine_lib[k] = v end
local co_create = coroutine.create
coroutine_lib.create = function(f)
  local co = as_caller('create', pcall(co_create, f))
  if tick then sethook(co, on_hook, '', HOOK_COUNT) end
  return co
end
-- wrap's coroutine hooks itself when it first runs (Lua's own wrap stays the function
-- the script calls: its failures keep Lua's positions)
local co_wrap = coroutine.wrap
coroutine_lib.wrap = function(f)
  if type(f) ~= 'function' then return as_caller('wrap', pcall(co_wrap, f)) end
  return co_wrap(function(...)
    if tick then sethook(on_hook, '', HOOK_COUNT) end
    return f(...)
  end)
end

local math_lib = {}
for k, v in next, math do math_lib[k] = v end
math_lib.random, math_lib.randomseed = hooks.random, hooks.randomseed

local string_proxy = protect(string)
G.string = string_proxy
getmetatable('').__index = string_proxy
G.table = protect(table)
G.math = protect(math_lib)
G.coroutine = protect(coroutine_lib)
G.os = protect({clock = os.clock})    -- Redis 7.4+ (7.0 has no os at all)
for name, lib in next, hooks.libraries do G[name] = protect(lib) end
G.redis = protect(hooks.redis)

globals = protect(G)
G._G = globals
setmetatable(G, {__index = function(_, name)
  error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
end})
for _, mt in ipairs({getmetatable(G), getmetatable('')}) do guarded_meta[mt] = protect(mt) end

-- The error handler: where did the script fail (the first frame that is the script's own,
-- skipping C functions, tail calls and this chunk), and what is the message.
local function on_error(err)
  local level, info = 2, nil
  repeat
    info = debug_getinfo(level, 'Sl')
    level = level + 1
  until info == nil or (info.what ~= 'C' and info.what ~= 'tail' and info.source ~= INTERNAL)
  local msg
  err = plain(err)
  if type(err) == 'table' then
    msg = rawget(err, 'err')
    if type(msg) ~= 'string' then msg = 'ERR unknown error' end
  else
    msg = 'ERR ' .. tostring(err)
  end
  if info then return {err = msg, source = info.source, line = info.currentline} end
  return {err = msg}
end

-- Where a C function's error points: the line of the script that called it.
local function where()
  local info = debug_getinfo(3, 'Sl')
  if info and info.currentline > 0 then return info.short_src .. ':' .. info.currentline .. ': ' end
  return ''
end
hooks.set_where(where)

local function compile(body, name)
  if body:byte(1) == 27 then return binary_refused(name) end
  local fn, msg = loadstring(body, name)
  if not fn then return nil, msg end
  setfenv(fn, globals)
  return fn
end

local function run_tables(fn, keys, argv)
  rawset(G, 'KEYS', keys)
  rawset(G, 'ARGV', argv)
  return xpcall(fn, on_error)
end

-- run(fn, #keys, key..., arg...): KEYS and ARGV made here from the arguments
local select = select
local function run(fn, nkeys, ...)
  local keys, argv = {...}, {}
  for i = nkeys + 1, select('#', ...) do
    argv[i - nkeys] = keys[i]
    keys[i] = nil
  end
  return run_tables(fn, keys, argv)
end


-- Functions (FUNCTION LOAD, FCALL). A library's code runs once, at load, and sees then only
-- the load API (`redis` with register_function, log and the version); the functions it
-- registers see, when FCALL runs them, the globals of any script. Like Redis, which swaps
-- the __index of its globals' metatable, the chunk's environment forwards its reads to
-- one or the other.
local library_meta = {__index = globals, __newindex = refuse_write}
local library_env = setmetatable({}, library_meta)
local function missing_global(_, name)
  error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
end

local function load_library(body, name, api)
  if body:byte(1) == 27 then return nil, select(2, binary_refused(name)) end
  local fn, msg = loadstring(body, name)
  if not fn then return nil, msg end
  setfenv(fn, library_env)
  local load_globals = {redis = protect(setmetatable(api, {__index = missing_global}))}
  library_meta.__index = protect(setmetatable(load_globals, {__index = missing_global}))
  -- on one line: a load stopped by the hook leaves a line hook that must not fire here
  local ok, err = xpcall(fn, on_error) library_meta.__index = globals return ok or false, err
end

-- A function as `run` calls it: its keys and arguments are its parameters, not globals.
local function entry(callback)
  return function()
    local keys, argv = rawget(G, 'KEYS'), rawget(G, 'ARGV')
    rawset(G, 'KEYS', nil)
    rawset(G, 'ARGV', nil)
    return callback(keys, argv)
  end
end

return compile, run, run_tables, load_library, entry, arm
"""
