#!lua
--[[
  One partition's lease and fencing epoch (design.md, "Scaling past one machine"). Both keys
  carry the partition's hash tag, so the script runs in the partition's Redis Cluster slot,
  next to the commits that check the epoch (commit-transition.lua).

  KEYS[1]  rs:{pN}:lease   string  id of the node holding the partition, expiring (PX)
  KEYS[2]  rs:{pN}:epoch   string  fencing epoch: raised by every acquisition and release, never lowered

  ARGV[1]  'acquire' | 'renew' | 'release' | 'read'
  ARGV[2]  node id (all but read)
  ARGV[3]  lease length in ms (acquire, renew)
  ARGV[4]  the epoch the node holds (renew, release)

  Output:
    acquire  the new epoch, or 0 when another node holds the lease
    renew    1 when extended, 0 when the node no longer holds it at that epoch
    release  1 when released, 0 when it was not the node's
    read     {holder or '', epoch, ms left or -1, Redis time in ms}
]]

local op, node = ARGV[1], ARGV[2]
local holder = redis.call('GET', KEYS[1])
local epoch = tonumber(redis.call('GET', KEYS[2]) or '0')

if op == 'acquire' then
  -- A lease of this very node id is taken over: its previous process died (or is a zombie,
  -- which the new epoch fences off).
  if holder and holder ~= node then return 0 end
  redis.call('SET', KEYS[1], node, 'PX', ARGV[3])
  return redis.call('INCR', KEYS[2])
elseif op == 'renew' then
  if (holder and holder ~= node) or epoch ~= tonumber(ARGV[4]) then return 0 end
  redis.call('SET', KEYS[1], node, 'PX', ARGV[3])
  return 1
elseif op == 'release' then
  if holder ~= node or epoch ~= tonumber(ARGV[4]) then return 0 end
  redis.call('DEL', KEYS[1])
  redis.call('INCR', KEYS[2])
  return 1
end
local t = redis.call('TIME')
return { holder or '', epoch, redis.call('PTTL', KEYS[1]), tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) }
