-- Read what the executive's filters and the notifier's rollup need to know about a batch of
-- checks, in one round trip. It only reads and reduces data (e.g. "the maintenance window covering
-- now"); every decision is taken in Go.
-- KEYS: none (every key is passed in ARGV, built by package schema; Cluster is not supported).
-- ARGV[1] now (unix seconds, from the injected clock)
-- ARGV[2] number of checks N
-- Then N records of 21 values:
--   1 check hash (check:ID)           2 mode: "event-ok" | "event" | "rollup"
--   3 ID:scheduled_maintenances       4 ID:scheduled_maintenance
--   5 ID:sorted_unscheduled_maintenance_timestamps
--   6 ID:unscheduled_maintenances     7 ID:unscheduled_maintenance
--   8-14 ID:last_<kind>_notification for problem, warning, critical, unknown, recovery,
--        acknowledgement, test
--   15 ID:sorted_state_timestamps     16 state history prefix "ID:" (per-timestamp keys are
--                                        prefix..TS..":state" / ":summary")
--   17 all_entity_ids_by_name         18 entity_id:ENTITY
--   19 entity name                    20 current_checks:ENTITY
--   21 check name
-- Mode "event-ok" skips notification and history reads when the stored state is ok (an ok event
-- on an ok check can never notify); "rollup" adds the enabled flag. Checks without maintenance
-- windows (nearly all) cost one EXISTS for both kinds.
-- Returns N arrays of 31 values (false = absent):
--   1 state 2 last_change 3 revision 4 last_event_time 5 last_sequence
--   6 initial_failure_delay 7 repeat_failure_delay
--   8 SM start 9 SM end (active window ending last) 10 SM current key value
--   11 UM start 12 UM end (latest window started by now) 13 UM current key value
--   14-20 last notification timestamps (order as keys 8-14)
--   21-23 newest history entry ts/state/summary 24-26 the one before
--   27 entity id (only for checks without a state) 28 summary 29 enabled (1/0) 30 history read (1/0)
--   31 details
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local out = {}
local base = 2
for i = 1, n do
  local a = function(j) return ARGV[base + j] end
  local mode = a(2)
  local r = {}
  local h = redis.call('HMGET', a(1), 'state', 'last_change', 'revision', 'last_event_time',
    'last_sequence', 'initial_failure_delay', 'repeat_failure_delay', 'summary', 'details')
  for j = 1, 7 do r[j] = h[j] end

  local maintained = redis.call('EXISTS', a(3), a(5)) > 0
  -- scheduled maintenance: the window covering now that ends last (windows may overlap)
  local sm = {}
  if maintained then sm = redis.call('ZRANGE', a(3), 0, -1, 'WITHSCORES') end
  local sm_start, sm_end = false, false
  for j = 1, #sm, 2 do
    local s, d = tonumber(sm[j]), tonumber(sm[j + 1])
    if s and d and s <= now and s + d > now and (not sm_end or s + d > sm_end) then
      sm_start, sm_end = s, s + d
    end
  end
  r[8], r[9] = sm_start, sm_end
  r[10] = false
  if #sm > 0 then r[10] = redis.call('GET', a(4)) end

  -- unscheduled maintenance: each new one ends the previous, so the latest start decides
  local um = {}
  if maintained then um = redis.call('ZREVRANGEBYSCORE', a(5), now, '-inf', 'LIMIT', 0, 1) end
  r[11], r[12], r[13] = false, false, false
  if #um > 0 then
    local dur = redis.call('ZSCORE', a(6), um[1])
    r[11] = tonumber(um[1])
    if dur then r[12] = tonumber(um[1]) + tonumber(dur) end
    r[13] = redis.call('GET', a(7))
  end

  local full = mode ~= 'event-ok' or (h[1] and h[1] ~= 'ok')
  for j = 14, 26 do r[j] = false end
  if full then
    local last = redis.call('MGET', a(8), a(9), a(10), a(11), a(12), a(13), a(14))
    for j = 1, 7 do r[13 + j] = last[j] end
    local hist = redis.call('ZREVRANGE', a(15), 0, 1)
    for j = 1, #hist do
      local o = 20 + (j - 1) * 3
      r[o + 1] = hist[j]
      r[o + 2] = redis.call('GET', a(16) .. hist[j] .. ':state')
      r[o + 3] = redis.call('GET', a(16) .. hist[j] .. ':summary')
    end
  end

  r[27] = false
  if not h[1] then
    r[27] = redis.call('HGET', a(17), a(19)) or redis.call('GET', a(18))
  end
  r[28], r[29] = h[8], false
  if mode == 'rollup' then
    r[29] = redis.call('ZSCORE', a(20), a(21)) and 1 or 0
  end
  r[30] = full and 1 or 0
  r[31] = h[9]
  out[i] = r
  base = base + 21
end
return out
