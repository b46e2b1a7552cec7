#!lua
--[[
  Commits one transition of one partition: all of it or, on a journal conflict, nothing
  (design.md, "The invariant"). All checks run before the first write, because Redis does
  not roll back the writes of a script that stops half-way.

  The shebang (Redis >= 7.0) declares the script without `allow-oom`: while Redis is over
  maxmemory the whole commit is refused before it runs, rather than being judged at its first
  memory-growing command (a transition starting with a delete would then slip past the limit).

  Every key is passed in KEYS and all share the partition's hash tag, so the script runs in
  one Redis Cluster slot. Sections below are read in order by two cursors, one over KEYS
  (from KEYS[6]) and one over ARGV (from ARGV[14]).

  Fencing comes first: a node commits only with the epoch it acquired the partition's lease at
  (lua/lease.lua). Any later acquisition raised the epoch, so a paused or cut-off old owner is
  refused whole, whatever it still believes.

  Input:
    KEYS[1]  rs:{pN}:invocations   set of every invocation id
    KEYS[2]  rs:{pN}:active        set of non-terminal invocation ids
    KEYS[3]  rs:{pN}:timers        zset timer key -> dueAt
    KEYS[4]  rs:{pN}:outbox        hash message id -> JSON body
    KEYS[5]  rs:{pN}:epoch         the partition's fencing epoch

    ARGV[1]  D   invocations to delete      ARGV[6]  TA  timers to add
    ARGV[2]  J   journal appends            ARGV[7]  OR  outbox messages to remove
    ARGV[3]  I   invocation writes          ARGV[8]  OA  outbox messages to add
    ARGV[4]  S   state groups               ARGV[9]  R   record writes
    ARGV[5]  TR  timers to remove           ARGV[10] E   record expectations
                                            ARGV[11] H   history appends
                                            ARGV[12]     history entries kept per invocation
                                            ARGV[13]     the committer's epoch; '' = unfenced

    section          per item: ARGV                          per item: KEYS
    deletes      D x id                                  snapshot key, journal key, history key
    journal      J x at, n, entry_1 .. entry_n           journal key
                     (entry = 2-byte big-endian type + payload, binary)
    expectations E x field, 'a' (absent) | 'v', JSON     record hash key
    invocations  I x id, snapshot JSON, '1' active | '0'  snapshot key
    state        S x n, op_1 .. op_n                     state hash key
                     (op = 's', field, value | 'c', field | 'a')
    timer rm     TR x timer key
    timer add    TA x dueAt, timer key
    outbox rm    OR x id
    outbox add   OA x id, JSON body
    records      R x 's', field, JSON | 'd', field        record hash key
    history      H x n, entry JSON_1 .. entry JSON_n       history list key

  Output:
    0            applied
    {j, length}  journal append j (1-based) expected another length; nothing was written
    {'record', e} record expectation e (1-based) did not hold; nothing was written
    {'fenced', epoch} the partition's epoch is another than the committer's; nothing was written
]]

if ARGV[13] ~= '' then
  local epoch = redis.call('GET', KEYS[5]) or '0'
  if epoch ~= ARGV[13] then return { 'fenced', tonumber(epoch) } end
end

local counts = {}
for i = 1, 11 do counts[i] = tonumber(ARGV[i]) end
local historyLimit = tonumber(ARGV[12])

local argAt, keyAt = 13, 5
local function nextArg()
  argAt = argAt + 1
  return ARGV[argAt]
end
local function nextKey()
  keyAt = keyAt + 1
  return KEYS[keyAt]
end

-- Read deletes, appends and expectations first: the checks must see them before any write.
local deletes = {}
for i = 1, counts[1] do
  deletes[i] = { id = nextArg(), snapshot = nextKey(), journal = nextKey(), history = nextKey() }
end
local appends = {}
for i = 1, counts[2] do
  local append = { key = nextKey(), at = tonumber(nextArg()), n = tonumber(nextArg()) }
  append.first = argAt + 1
  argAt = argAt + append.n
  appends[i] = append
end

local lengths = {}
for _, d in ipairs(deletes) do lengths[d.journal] = 0 end
for i, append in ipairs(appends) do
  local length = lengths[append.key] or redis.call('LLEN', append.key)
  if length ~= append.at then return { i, length } end
  lengths[append.key] = length + append.n
end

for i = 1, counts[10] do
  local key, field, mode = nextKey(), nextArg(), nextArg()
  local stored = redis.call('HGET', key, field)
  if mode == 'a' then
    if stored then return { 'record', i } end
  elseif stored ~= nextArg() then
    return { 'record', i }
  end
end

-- From here on nothing can refuse the transition.
for _, d in ipairs(deletes) do
  redis.call('DEL', d.snapshot, d.journal, d.history)
  redis.call('SREM', KEYS[1], d.id)
  redis.call('SREM', KEYS[2], d.id)
end

-- unpack() is bounded by the Lua C stack, so long appends go out in slices.
local SLICE = 1000
for _, append in ipairs(appends) do
  local last = append.first + append.n - 1
  for from = append.first, last, SLICE do
    redis.call('RPUSH', append.key, unpack(ARGV, from, math.min(from + SLICE - 1, last)))
  end
end

for _ = 1, counts[3] do
  local key, id, snapshot, active = nextKey(), nextArg(), nextArg(), nextArg()
  redis.call('SET', key, snapshot)
  redis.call('SADD', KEYS[1], id)
  if active == '1' then
    redis.call('SADD', KEYS[2], id)
  else
    redis.call('SREM', KEYS[2], id)
  end
end

for _ = 1, counts[4] do
  local key, n = nextKey(), tonumber(nextArg())
  for _ = 1, n do
    local op = nextArg()
    if op == 's' then
      local field = nextArg()
      redis.call('HSET', key, field, nextArg())
    elseif op == 'c' then
      redis.call('HDEL', key, nextArg())
    else
      redis.call('DEL', key)
    end
  end
end

for _ = 1, counts[5] do redis.call('ZREM', KEYS[3], nextArg()) end
for _ = 1, counts[6] do
  local dueAt = nextArg()
  redis.call('ZADD', KEYS[3], dueAt, nextArg())
end

for _ = 1, counts[7] do redis.call('HDEL', KEYS[4], nextArg()) end
for _ = 1, counts[8] do
  local id = nextArg()
  redis.call('HSET', KEYS[4], id, nextArg())
end

for _ = 1, counts[9] do
  local key, op, field = nextKey(), nextArg(), nextArg()
  if op == 's' then
    redis.call('HSET', key, field, nextArg())
  else
    redis.call('HDEL', key, field)
  end
end

for _ = 1, counts[11] do
  local key, n = nextKey(), tonumber(nextArg())
  if n > 0 then
    redis.call('RPUSH', key, unpack(ARGV, argAt + 1, argAt + n))
    redis.call('LTRIM', key, -historyLimit, -1)
  end
  argAt = argAt + n
end

return 0
