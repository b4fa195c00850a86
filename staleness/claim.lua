-- Claims the checks whose ttl ran out (docs/decisions.md D19). Each due check is moved one ttl on in the
-- same step, so when several executives tick at once exactly one of them claims each silence
-- period; the caller then queues one stale result per claimed check. Bounded: at most limit
-- checks per call, found through the sorted set (never a scan of all checks).
--
-- KEYS[1] stale_deadlines: zset, member ENTITY:CHECK, score the unix time it falls due
-- KEYS[2] stale_checks: hash, ENTITY:CHECK -> {"ttl":T,"last":L,"tags":[...]}
-- ARGV[1] now: unix seconds, from the injected clock
-- ARGV[2] limit: how many due checks this call looks at
-- ARGV[3] check_prefix: "check:" under the key prefix (check:ENTITY:CHECK, for last_update and
--         the failure delays)
-- ARGV[4] current_prefix: "current_checks:" under the key prefix (current_checks:ENTITY)
--
-- A due check is disarmed (both entries removed, nothing claimed) when its entry is missing or
-- unreadable, when a real result without a ttl arrived since the one that set it (last_update
-- moved past "last"), or when the check is gone or disabled (not in current_checks:ENTITY).
--
-- Returns {looked, disarmed, then per claimed check: id, entry, initial_failure_delay,
-- repeat_failure_delay} ("" for a delay the check hash does not hold).
local deadlines, entries = KEYS[1], KEYS[2]
local now, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local check_prefix, current_prefix = ARGV[3], ARGV[4]

local due = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
local out = {0, 0}
for i = 1, #due, 2 do
  local id, deadline = due[i], tonumber(due[i + 1])
  out[1] = out[1] + 1
  local raw = redis.call('HGET', entries, id)
  local ok, entry = false, nil
  if raw then ok, entry = pcall(cjson.decode, raw) end
  ok = ok and type(entry) == 'table'
  local ttl, last = ok and tonumber(entry.ttl), ok and tonumber(entry.last)
  local h = redis.call('HMGET', check_prefix .. id, 'last_update', 'initial_failure_delay', 'repeat_failure_delay')
  local colon = string.find(id, ':', 1, true)
  local current = colon and redis.call('ZSCORE', current_prefix .. string.sub(id, 1, colon - 1), string.sub(id, colon + 1))
  if not ttl or ttl < 1 or not last or tonumber(h[1]) ~= last or not current then
    redis.call('ZREM', deadlines, id)
    redis.call('HDEL', entries, id)
    out[2] = out[2] + 1
  else
    local next = deadline + ttl
    if next <= now then next = now + ttl end
    redis.call('ZADD', deadlines, next, id)
    out[#out + 1] = id
    out[#out + 1] = raw
    out[#out + 1] = h[2] or ''
    out[#out + 1] = h[3] or ''
  end
end
return out
