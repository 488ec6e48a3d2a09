"""The atomic steps, as Lua scripts (redis-py's register_script: EVALSHA, falling back
to EVAL when the server does not have the script yet). Every script's keys share the
stream's hash tag, so they run on a cluster too. One `Scripts` serves sync and asyncio
clients alike (sluice/worker/flows.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from sluice.worker.flows import Maybe, then
from sluice.worker.task import text

# KEYS: the stream, then the locks of one read's entries; ARGV: token, ttl_ms, group.
# Per lock 1 when it is ours (taken now, or already ours: a call retried after its reply
# was lost), else 0; then the group's pending count.
_ACQUIRE = """
local got = {}
for i = 2, #KEYS do
  local lock = KEYS[i]
  if redis.call('SET', lock, ARGV[1], 'NX', 'PX', ARGV[2]) or redis.call('GET', lock) == ARGV[1] then
    got[i - 1] = 1
  else
    got[i - 1] = 0
  end
end
got[#KEYS] = redis.call('XPENDING', KEYS[1], ARGV[3])[1]
return got
"""

# KEYS: lock; ARGV: token, ttl_ms -- extend the lock only while it is still ours
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# KEYS: lock; ARGV: token
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

# KEYS: stream, then the finished tasks' locks; ARGV: group, then per lock its entry's
# id and our token. The tasks are done: XACK them all, and free each lock still ours.
# Returns how many the XACK acknowledged and the group's pending count after it.
_ACK = """
local ids = {}
for i = 2, #KEYS do
  ids[i - 1] = ARGV[2 * i - 2]
  if redis.call('GET', KEYS[i]) == ARGV[2 * i - 1] then redis.call('DEL', KEYS[i]) end
end
local acked = redis.call('XACK', KEYS[1], ARGV[1], unpack(ids))
return {acked, redis.call('XPENDING', KEYS[1], ARGV[1])[1]}
"""

# KEYS: stream; ARGV: group, idle_ms, our consumer name. Removes the group's consumers
# with nothing pending that have not read for idle_ms (never ourselves): checked and
# removed in one step, so no entry can be delivered to one between the two and lost
# with it. Returns their names.
_PRUNE = """
local gone = {}
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for i = 1, #consumer, 2 do info[consumer[i]] = consumer[i + 1] end
  if info['pending'] == 0 and info['idle'] >= tonumber(ARGV[2]) and info['name'] ~= ARGV[3] then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    gone[#gone + 1] = info['name']
  end
end
return gone
"""

# KEYS: stream, dlq (the stream again when there is none), lock, error note
# ARGV: group, id, field prefix, max retries, reason, token ('' = not ours), dlq enabled
# Returns {outcome, new id}. Skips an entry whose lock someone else holds; XACKs and,
# only when that acknowledged it, adds its fields back with the retry count raised
# (or to the DLQ past max retries), all in one step so no crash can lose the entry.
# Where the server has XADD IDMP (Redis 8.6, Sluice) the add is idempotent, named by
# the group, the task's original ID and its retry count: an entry delivered again
# after its requeue (a group moved back with XGROUP SETID, a PEL restored from an older
# copy) and requeued again adds nothing; the reply is the entry added the first time.
# Elsewhere XADD refuses IDMP as an invalid ID, and a plain XADD is done.
_REQUEUE = """
local function add(key, producer, iid, fields)
  local id = redis.pcall('XADD', key, 'IDMP', producer, iid, '*', unpack(fields))
  if type(id) == 'table' and id.err then
    return redis.call('XADD', key, '*', unpack(fields))
  end
  return id
end
local lock = redis.call('GET', KEYS[3])
if lock and lock ~= ARGV[6] then return {'alive', ''} end
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return {'handled', ''} end
if lock then redis.call('DEL', KEYS[3]) end
local err = redis.call('GET', KEYS[4])
if err then redis.call('DEL', KEYS[4]) else err = ARGV[5] end
local entries = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
if #entries == 0 or not entries[1][2] then return {'trimmed', ''} end
local retry_f, origin_f, error_f = ARGV[3]..'retry_count', ARGV[3]..'original_id', ARGV[3]..'last_error'
local retries, origin, out = 0, ARGV[2], {}
local fields = entries[1][2]
for i = 1, #fields, 2 do
  local name, value = fields[i], fields[i + 1]
  if name == retry_f then retries = tonumber(value) or 0
  elseif name == origin_f then origin = value
  elseif name ~= error_f then out[#out + 1] = name; out[#out + 1] = value end
end
retries = retries + 1
for _, v in ipairs({retry_f, tostring(retries), origin_f, origin, error_f, err}) do out[#out + 1] = v end
local iid = origin .. ':' .. retries
if retries > tonumber(ARGV[4]) then
  if ARGV[7] == '1' then return {'dead', add(KEYS[2], 'dead:' .. ARGV[1], iid, out)} end
  return {'dropped', ''}
end
return {'requeued', add(KEYS[1], 'requeue:' .. ARGV[1], iid, out)}
"""


@dataclass(frozen=True)
class RequeueResult:
    """What the requeue script did: outcome is one of 'requeued', 'dead' (to the DLQ),
    'dropped' (past max retries, no DLQ), 'handled' (XACK returned 0: someone else
    already did it), 'alive' (another owner holds the lock), 'trimmed' (acked, but the
    entry was gone)."""

    outcome: str
    new_id: str


def _is_one(reply: Any) -> bool:
    return reply == 1


def _locks_and_pending(reply: Any) -> tuple[list[bool], int]:
    return [got == 1 for got in reply[:-1]], reply[-1]


def _acked_and_pending(reply: Any) -> tuple[int, int]:
    return reply[0], reply[1]


def _requeue_result(reply: Any) -> RequeueResult:
    outcome, new_id = reply
    return RequeueResult(text(outcome), text(new_id))


class Scripts:
    """The scripts registered on one client, sync or asyncio: with an asyncio client
    each method returns an awaitable of the same result."""

    def __init__(self, client: Any) -> None:
        self._acquire = client.register_script(_ACQUIRE)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._ack = client.register_script(_ACK)
        self._requeue = client.register_script(_REQUEUE)
        self._prune = client.register_script(_PRUNE)

    def acquire(self, stream: str, group: str, locks: Sequence[str], token: str,
                ttl_ms: int) -> Maybe[tuple[list[bool], int]]:
        """Takes the locks (one slot: they share the stream's hash tag) in one call;
        per lock whether it is ours, and the group's pending count."""
        return then(self._acquire(keys=[stream, *locks], args=[token, ttl_ms, group]),
                    _locks_and_pending)

    def renew(self, lock: str, token: str, ttl_ms: int) -> Maybe[bool]:
        return then(self._renew(keys=[lock], args=[token, ttl_ms]), _is_one)

    def release(self, lock: str, token: str) -> Maybe[bool]:
        return then(self._release(keys=[lock], args=[token]), _is_one)

    def ack(self, stream: str, group: str,
            done: Sequence[tuple[str, str, str]]) -> Maybe[tuple[int, int]]:
        """XACKs the `done` tasks, (entry id, lock, token) each, and frees the locks still
        ours, in one call; how many the XACK acknowledged, and the group's pending count
        after it."""
        args: list[str] = [group]
        for entry_id, _, token in done:
            args += (entry_id, token)
        return then(self._ack(keys=[stream, *(lock for _, lock, _ in done)], args=args),
                    _acked_and_pending)

    def prune(self, stream: str, group: str, idle_ms: int, consumer: str) -> Maybe[list]:
        """Removes the idle consumers with nothing pending (not `consumer`); their names."""
        return self._prune(keys=[stream], args=[group, idle_ms, consumer])

    def requeue(self, *, stream: str, dlq: str, lock: str, error: str, group: str, entry_id: str,
                prefix: str, max_retries: int, reason: str, token: str = "") -> Maybe[RequeueResult]:
        return then(self._requeue(keys=[stream, dlq or stream, lock, error],
                                  args=[group, entry_id, prefix, max_retries, reason, token,
                                        "1" if dlq else "0"]),
                    _requeue_result)
