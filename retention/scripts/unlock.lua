-- Release the retention lock only if this process still holds it (its TTL may have passed and
-- another process taken it).
-- KEYS[1] retention_lock
-- ARGV[1] the holder's id, as written by SET NX
-- Returns 1 when released.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
