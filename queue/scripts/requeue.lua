-- Move up to N items of a (dead or stopping) consumer's processing list back to the consuming end
-- of its queue, oldest claim ending up first in line. Bounded per call; the caller loops until
-- nothing is left so Redis is never blocked for long.
-- KEYS[1] processing list
-- KEYS[2] source queue
-- ARGV[1] max items to move
-- ARGV[2] consuming end of the source: "RIGHT" or "LEFT" (as in claim.lua)
-- Returns {moved, remaining}.
local moved = 0
for i = 1, tonumber(ARGV[1]) do
  local item = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', ARGV[2])
  if not item then
    break
  end
  moved = moved + 1
end
return {moved, redis.call('LLEN', KEYS[1])}
