-- Take the PagerDuty acknowledgement poller's lock, so that one poller runs at a time across
-- every instance, and at most once per poll interval.
-- KEYS[1] sem_pagerduty_acks_running (schema.Keys.PagerdutyAcksLock). Its value is the token
--         of the running poller, "true" while a Flapjack 1.x process runs (it keeps us out
--         too), or "idle:<ms>" once a run ended: the next run may start at that unix time (ms).
-- ARGV[1] a random token for this run
-- ARGV[2] now, unix milliseconds, from the injected clock (never Redis TIME)
-- ARGV[3] expiry of the lock in seconds: only matters when a poller dies holding it
-- Returns 1 when taken, 0 when another poller is running, 2 when the last run ended less than
-- a poll interval ago.
local v = redis.call('GET', KEYS[1])
if v then
  local next_run = tonumber(string.match(v, '^idle:(%d+)$'))
  if not next_run then return 0 end
  if next_run > tonumber(ARGV[2]) then return 2 end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[3]))
return 1
