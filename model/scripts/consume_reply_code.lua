-- Take a reply code of a phone number: the check it acknowledges, once, within its lifetime, and
-- only while the number has not named too many unknown codes.
-- KEYS: none (keys come from package schema in ARGV; Cluster is not supported).
-- ARGV[1] sms_reply_codes:NUMBER   ARGV[2] sms_reply_failures:NUMBER   ARGV[3] the code
-- ARGV[4] now (unix seconds)   ARGV[5] failures allowed   ARGV[6] the failure window (seconds)
-- Returns {status, record}: status "ok" (record: the code's JSON, now removed), "unknown"
-- (no live code: counted), or "blocked" (too many failures within the window: not even looked up).
local codes, failures, code = ARGV[1], ARGV[2], ARGV[3]
local now, allowed, window = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local f = redis.call('HMGET', failures, 'count', 'since')
local count, since = tonumber(f[1] or '0') or 0, tonumber(f[2] or '0') or 0
if since + window <= now then
  count, since = 0, now
end
if count >= allowed then
  return {'blocked', ''}
end
local rec = redis.call('HGET', codes, code)
if rec then
  local ok, decoded = pcall(cjson.decode, rec)
  if ok and type(decoded) == 'table' and tonumber(decoded['expires'] or 0) > now then
    redis.call('HDEL', codes, code)
    return {'ok', rec}
  end
  redis.call('HDEL', codes, code)
end
redis.call('HSET', failures, 'count', count + 1, 'since', since)
redis.call('EXPIRE', failures, window)
return {'unknown', ''}
