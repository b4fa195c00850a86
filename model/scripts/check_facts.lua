-- Read what the executive's filters and the notifier's rollup need to know about a batch of
-- checks, in one round trip. It only reads and reduces data (e.g. "the maintenance window covering
-- now"); every decision is taken in Go.
-- KEYS: none (Cluster is not supported). Per-check keys are the check's history prefix "ID:"
-- followed by a suffix; the prefix and the suffixes are built by package schema and passed here,
-- so key names still come from one place, and the common case sends two keys per check.
-- ARGV[1] now (unix seconds, from the injected clock)
-- ARGV[2] number of checks N
-- ARGV[3..15] suffixes: 3 scheduled_maintenances, 4 scheduled_maintenance,
--   5 sorted_unscheduled_maintenance_timestamps, 6 unscheduled_maintenances,
--   7 unscheduled_maintenance, 8-14 last_<kind>_notification for problem, warning, critical,
--   unknown, recovery, acknowledgement, test, 15 sorted_state_timestamps
-- ARGV[16] all_entity_ids_by_name   ARGV[17] prefix of entity_id:ENTITY
-- ARGV[18] prefix of current_checks:ENTITY
-- Then N records of 5 values: check hash (check:ID), history prefix "ID:", mode ("event-ok",
-- "event", "rollup" or "maintenance"), entity name, check name.
-- Mode "event-ok" skips notification and history reads when the stored state is ok (an ok event
-- on an ok check can never notify); "rollup" adds the enabled flag; "maintenance" reads only
-- the check hash and maintenance windows (status). Checks without maintenance windows (nearly
-- all) cost one EXISTS for both kinds.
-- Returns N arrays of 33 values (false = absent):
--   1 state 2 last_change 3 revision 4 last_event_time 5 last_sequence
--   6 initial_failure_delay 7 repeat_failure_delay
--   8 SM start 9 SM end (active window ending last) 10 SM current key value
--   11 UM start 12 UM end (latest window started by now) 13 UM current key value
--   14-20 last notification timestamps (problem ... test)
--   21-23 newest history entry ts/state/summary 24-26 the one before
--   27 entity id (only for checks without a state) 28 summary 29 enabled (1/0) 30 history read (1/0)
--   31 details 32 last_notification_kind 33 notified_severity (the order of notifications, kept
--   beside their whole-second timestamps)
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local sfx = {}
for j = 3, 15 do sfx[j] = ARGV[j] end
local entity_ids, entity_id_prefix, current_prefix = ARGV[16], ARGV[17], ARGV[18]
local out = {}
local base = 18
for i = 1, n do
  local hash, p, mode, entity, check = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3], ARGV[base + 4], ARGV[base + 5]
  base = base + 5
  local r = {}
  local h = redis.call('HMGET', hash, 'state', 'last_change', 'revision', 'last_event_time',
    'last_sequence', 'initial_failure_delay', 'repeat_failure_delay', 'summary', 'details',
    'last_notification_kind', 'notified_severity')
  for j = 1, 7 do r[j] = h[j] end

  local sm_key, um_sorted = p .. sfx[3], p .. sfx[5]
  local maintained = redis.call('EXISTS', sm_key, um_sorted) > 0
  -- scheduled maintenance: the window covering now that ends last (windows may overlap)
  local sm = {}
  if maintained then sm = redis.call('ZRANGE', sm_key, 0, -1, 'WITHSCORES') end
  local sm_start, sm_end = false, false
  for j = 1, #sm, 2 do
    local s, d = tonumber(sm[j]), tonumber(sm[j + 1])
    if s and d and s <= now and s + d > now and (not sm_end or s + d > sm_end) then
      sm_start, sm_end = s, s + d
    end
  end
  r[8], r[9] = sm_start, sm_end
  r[10] = false
  if #sm > 0 then r[10] = redis.call('GET', p .. sfx[4]) end

  -- unscheduled maintenance: each new one ends the previous, so the latest start decides
  local um = {}
  if maintained then um = redis.call('ZREVRANGEBYSCORE', um_sorted, now, '-inf', 'LIMIT', 0, 1) end
  r[11], r[12], r[13] = false, false, false
  if #um > 0 then
    local dur = redis.call('ZSCORE', p .. sfx[6], um[1])
    r[11] = tonumber(um[1])
    if dur then r[12] = tonumber(um[1]) + tonumber(dur) end
    r[13] = redis.call('GET', p .. sfx[7])
  end

  local full = mode == 'event' or mode == 'rollup' or (mode == 'event-ok' and h[1] and h[1] ~= 'ok')
  for j = 14, 26 do r[j] = false end
  if full then
    local last = redis.call('MGET', p .. sfx[8], p .. sfx[9], p .. sfx[10], p .. sfx[11],
      p .. sfx[12], p .. sfx[13], p .. sfx[14])
    for j = 1, 7 do r[13 + j] = last[j] end
    local hist = redis.call('ZREVRANGE', p .. sfx[15], 0, 1)
    for j = 1, #hist do
      local o = 20 + (j - 1) * 3
      r[o + 1] = hist[j]
      r[o + 2] = redis.call('GET', p .. hist[j] .. ':state')
      r[o + 3] = redis.call('GET', p .. hist[j] .. ':summary')
    end
  end

  r[27] = false
  if not h[1] then
    r[27] = redis.call('HGET', entity_ids, entity) or redis.call('GET', entity_id_prefix .. entity)
  end
  r[28], r[29] = h[8], false
  if mode == 'rollup' then
    r[29] = redis.call('ZSCORE', current_prefix .. entity, check) and 1 or 0
  end
  r[30] = full and 1 or 0
  r[31], r[32], r[33] = h[9], h[10], h[11]
  out[i] = r
end
return out
