-- Forget queued acknowledgements: applied, over by the clock, or whose event could not be
-- pushed. An entry is removed only if it still holds the time read, so a claim made meanwhile
-- by another poller is kept.
-- KEYS[1] pagerduty_acks_queued (schema.Keys.PagerdutyAcksQueued)
-- ARGV    pairs of ENTITY:CHECK and the unix ms it held when read
-- Returns the number of entries removed.
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    n = n + redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return n
