-- Release the PagerDuty acknowledgement poller's lock, only if this run still holds it (a lock
-- that expired may have been taken by another poller meanwhile).
-- KEYS[1] sem_pagerduty_acks_running (schema.Keys.PagerdutyAcksLock)
-- ARGV[1] the token this run stored when it took the lock
-- ARGV[2] unix milliseconds (injected clock) before which no poller should start the next run;
--         0 deletes the key instead
-- ARGV[3] expiry of that "idle:<ms>" marker in milliseconds: garbage collection only, longer
--         than the interval (the time in the value decides, not the expiry)
-- Returns 1 when released, 0 when the lock was not ours any more.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if tonumber(ARGV[2]) > 0 then
  redis.call('SET', KEYS[1], 'idle:' .. ARGV[2], 'PX', tonumber(ARGV[3]))
else
  redis.call('DEL', KEYS[1])
end
return 1
