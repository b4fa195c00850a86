-- Trim one check's history to the retention policy, doing at most ARGV[4] deletions per call
-- (the caller repeats while the reply says more is left), so Redis is never blocked for long.
-- The newest state change is always kept: it records the current state.
-- KEYS: none (keys come from package schema; per-timestamp keys are built from the history
-- prefix "ID:" as prefix..TS..":state" and so on).
-- ARGV[1] cutoff: history strictly older than this unix time goes (0 = no age limit)
-- ARGV[2] max state changes kept (0 = no count limit)
-- ARGV[3] history prefix "ID:"
-- ARGV[4] max deletions in this call
-- ARGV[5] ID:sorted_state_timestamps   ARGV[6] ID:states   ARGV[7] ID:actions
-- ARGV[8] ID:scheduled_maintenances    ARGV[9] ID:sorted_scheduled_maintenance_timestamps
-- ARGV[10] ID:unscheduled_maintenances ARGV[11] ID:sorted_unscheduled_maintenance_timestamps
-- ARGV[12] maintenance summary suffix for scheduled ("scheduled_maintenance:summary")
-- ARGV[13] the same for unscheduled
-- ARGV[14..] ID:<kind>_notifications lists
-- Returns {deleted, more} where more is 1 when the budget ran out.
local cutoff = tonumber(ARGV[1])
local keep = tonumber(ARGV[2])
local prefix = ARGV[3]
local budget = tonumber(ARGV[4])
local deleted = 0

local function spend(n)
  deleted = deleted + n
  return deleted < budget
end

-- state changes: by age (never the newest) and beyond the newest `keep`
local sorted, states = ARGV[5], ARGV[6]
local total = redis.call('ZCARD', sorted)
local drop = 0
if keep > 0 and total > keep then drop = total - keep end
if cutoff > 0 then
  local old = redis.call('ZCOUNT', sorted, '-inf', '(' .. cutoff)
  if old > drop then drop = old end
end
if drop > total - 1 then drop = total - 1 end
if drop > budget then drop = budget end
if drop > 0 then
  local victims = redis.call('ZRANGE', sorted, 0, drop - 1)
  local newest_gone = tonumber(victims[#victims])
  for _, ts in ipairs(victims) do
    redis.call('DEL', prefix .. ts .. ':state', prefix .. ts .. ':summary', prefix .. ts .. ':details',
      prefix .. ts .. ':count', prefix .. ts .. ':check_latency')
  end
  redis.call('ZREMRANGEBYRANK', sorted, 0, drop - 1)
  -- the list is chronological; it may repeat a second, so pop by value, not by count
  while true do
    local head = redis.call('LINDEX', states, 0)
    if not head or tonumber(head) > newest_gone then break end
    redis.call('LPOP', states)
  end
  spend(drop)
end

if cutoff > 0 then
  -- notification history lists are chronological
  for i = 14, #ARGV do
    while deleted < budget do
      local head = redis.call('LINDEX', ARGV[i], 0)
      if not head or tonumber(head) >= cutoff then break end
      redis.call('LPOP', ARGV[i])
      spend(1)
    end
  end
  -- maintenance windows that ended before the cutoff
  for _, m in ipairs({{ARGV[8], ARGV[9], ARGV[12]}, {ARGV[10], ARGV[11], ARGV[13]}}) do
    local windows = redis.call('ZRANGEBYSCORE', m[2], '-inf', '(' .. cutoff, 'LIMIT', 0, math.max(budget - deleted, 0))
    for _, start in ipairs(windows) do
      local dur = tonumber(redis.call('ZSCORE', m[1], start) or 0)
      if tonumber(start) + dur < cutoff then
        redis.call('ZREM', m[1], start)
        redis.call('ZREM', m[2], start)
        redis.call('DEL', prefix .. start .. ':' .. m[3])
        spend(1)
      end
    end
  end
  -- actions
  if deleted < budget then
    local fields = redis.call('HKEYS', ARGV[7])
    for _, ts in ipairs(fields) do
      if deleted >= budget then break end
      if tonumber(ts) and tonumber(ts) < cutoff then
        redis.call('HDEL', ARGV[7], ts)
        spend(1)
      end
    end
  end
end
local more = 0
if deleted >= budget then more = 1 end
return {deleted, more}
