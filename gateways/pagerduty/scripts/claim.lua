-- Claim a check's acknowledgement before its event is queued, so that pollers of every instance
-- together queue one while the executive has not applied it yet.
-- KEYS[1] pagerduty_acks_queued (schema.Keys.PagerdutyAcksQueued): ENTITY:CHECK -> unix ms at
--         which an acknowledgement event was queued
-- ARGV[1] ENTITY:CHECK
-- ARGV[2] now, unix milliseconds, from the injected clock (never Redis TIME)
-- ARGV[3] how long a queued acknowledgement holds off another one, in milliseconds
-- ARGV[4] expiry of the hash in milliseconds: garbage collection only (the times decide)
-- Returns 1 when claimed (the caller queues the event), 0 when one was queued less than the
-- hold ago.
local at = tonumber(redis.call('HGET', KEYS[1], ARGV[1]))
if at and tonumber(ARGV[2]) < at + tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
return 1
