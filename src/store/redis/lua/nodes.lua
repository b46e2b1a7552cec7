#!lua
--[[
  The node registry: who is alive, and where the other nodes reach it. Expiry uses Redis's
  clock, so the nodes' clocks need not agree. Both keys share the hash tag {nodes}.

  KEYS[1]  rs:{nodes}:live   zset  node id -> epoch ms its announcement runs out
  KEYS[2]  rs:{nodes}:info   hash  node id -> JSON of how to reach it

  ARGV[1]  'beat' | 'leave'
  ARGV[2]  node id
  ARGV[3]  JSON of the node (beat)
  ARGV[4]  ms the announcement lasts (beat)

  Output: beat → {now ms, id_1, JSON_1, ...} of the nodes alive now; leave → 0
]]

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

if ARGV[1] == 'leave' then
  redis.call('ZREM', KEYS[1], ARGV[2])
  redis.call('HDEL', KEYS[2], ARGV[2])
  return 0
end

redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local gone = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE')
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
end
local out = { now }
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[2], id) or '{}'
end
return out
