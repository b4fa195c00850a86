-- Remove one finished item from a processing list and, in the same step, record its fate on
-- another list (a dead letter, a delivered log) when asked. Used by stages whose effects are not
-- written by their own script (the gateways).
-- KEYS[1] processing list
-- KEYS[2] optional list to RPUSH ARGV[2] onto; "" for none
-- ARGV[1] the item, exactly as claimed
-- ARGV[2] the record to push (ignored without KEYS[2])
-- Returns 1 if the item was still claimed by this instance, 0 if a peer had requeued it.
local removed = redis.call('LREM', KEYS[1], -1, ARGV[1])
if removed == 0 then
  return 0
end
if KEYS[2] ~= '' then
  redis.call('RPUSH', KEYS[2], ARGV[2])
end
return 1
