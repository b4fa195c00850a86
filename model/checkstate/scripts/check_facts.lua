-- Read what the executive's filters and the notifier's rollup need to know about a batch of
-- checks, in one round trip. It only reads and reduces data (e.g. "the maintenance window covering
-- now"); every decision is taken in Go.
-- Arguments and reply are positional. Their positions are named once, in model/facts_layout.go,
-- and the lists below give them in order (a test compares the two). The script writes ${state}
-- for the 1-based position of a name (in ARGV, in a record, in a check's reply or in a history
-- entry) and ${kinds} etc. for a count; Go substitutes the numbers when it loads the script.
-- KEYS: none (Cluster is not supported). Per-check keys are the check's history prefix "ID:"
-- followed by a suffix; the prefix and the suffixes are built by package schema and passed here,
-- so key names still come from one place, and the common case sends two keys per check.
-- ARGV header (header_len values):
--   now                        unix seconds, from the injected clock
--   checks                     N, the number of records after the header
--   scheduled_maintenances     suffix of the per-check key ID:<name>, as are the next four
--   scheduled_maintenance
--   sorted_unscheduled_maintenance_timestamps
--   unscheduled_maintenances
--   unscheduled_maintenance
--   last_notification[7]       suffixes of ID:last_<kind>_notification for problem, warning,
--                                critical, unknown, recovery, acknowledgement, test
--   sorted_state_timestamps    suffix of ID:sorted_state_timestamps
--   state_at                   suffix of ID:TS:state (after "ID:" and TS)
--   summary_at                 suffix of ID:TS:summary
--   entity_ids_by_name         the key all_entity_ids_by_name
--   entity_id_prefix           prefix of entity_id:ENTITY
--   current_checks_prefix      prefix of current_checks:ENTITY
--   packed                     "1": each check's reply is one string, its values joined by the
--                                byte 0x1f (absent ones empty); "0": an array, as below
--   known_check_tags           the key known_tags:check_tag, whose members (the tags the API gave
--                                checks) are added after the checks' replies; "" for none
-- ARGV record (one per check after the header, args_per_check values each):
--   check_hash                 check:ID
--   history_prefix             "ID:"
--   mode                       "event-ok", "event", "rollup", "maintenance" or "alerting"
--   entity                     entity name
--   check                      check name
-- Mode "event-ok" skips notification and history reads when the stored state is ok (an ok event
-- on an ok check can never notify); "rollup" adds the enabled flag; "maintenance" reads only
-- the check hash and maintenance windows (status); "alerting" reads the windows, the enabled
-- flag, the entity id and only the state, last_change and summary of the check hash (the
-- notifier cleaning a contact's alerting set reads every member's).
-- Packed, Redis converts and Go decodes one string per check instead of every value apart; Go
-- counts the separators and reads a check again unpacked when a value holds the byte itself.
-- Packed, a check with a state and without maintenance windows whose notification history is
-- not needed (an ok event on an ok check: nearly every event; modes "maintenance" and
-- "alerting", which the notifier runs over every member of an alerting set) gets the short
-- form: the byte 0x1e, then the HMGET's eleven values in its order, the enabled flag and the
-- entity id ("" when not read), joined by 0x1f; every other value is absent. Building the whole reply cost Lua most
-- of its time per check.
-- With known_check_tags, that set's members follow the checks' replies.
-- Returns N replies, one per check, of these values (false = absent), packed or as an array:
--   state                      this and the next six: fields of the check hash
--   last_change
--   revision
--   last_event_time
--   last_sequence
--   initial_failure_delay
--   repeat_failure_delay
--   sm_start                   scheduled maintenance: the window covering now that ends last
--   sm_end
--   sm_current                 the value of ID:scheduled_maintenance, read when windows exist
--   um_start                   unscheduled maintenance: the latest window started by now
--   um_end
--   um_current                 the value of ID:unscheduled_maintenance
--   last_notified[7]           last notification timestamps, in last_notification's order
--   history[6]                 the newest history_len state changes, newest first, each a
--                                history entry of history_fields values
--   entity_id                  for checks without a state, and in mode "alerting"
--   summary                    field of the check hash
--   enabled                    1/0, modes "rollup" and "alerting" only
--   history_read               1/0: whether last_notified and history were read
--   details                    field of the check hash
--   last_notification_kind     with notified_severity, fields of the check hash that order the
--                                notifications of one second (their timestamps are whole seconds)
--   notified_severity
--   no_windows                 1/0: the check has no maintenance windows at all, past or future
--                                (a cached decision on such a check is guarded by their absence)
-- History entry:
--   hist_time                  the timestamp TS, a member of ID:sorted_state_timestamps
--   hist_state                 the value of ID:TS:state
--   hist_summary               the value of ID:TS:summary
local now = tonumber(ARGV[${now}])
local n = tonumber(ARGV[${checks}])
local sm_sfx, sm_current_sfx = ARGV[${scheduled_maintenances}], ARGV[${scheduled_maintenance}]
local um_sorted_sfx = ARGV[${sorted_unscheduled_maintenance_timestamps}]
local um_sfx, um_current_sfx = ARGV[${unscheduled_maintenances}], ARGV[${unscheduled_maintenance}]
local last_sfx = {}
for k = 1, ${kinds} do last_sfx[k] = ARGV[${last_notification} - 1 + k] end
local states_sfx = ARGV[${sorted_state_timestamps}]
local state_sfx, summary_sfx = ARGV[${state_at}], ARGV[${summary_at}]
local entity_ids = ARGV[${entity_ids_by_name}]
local entity_id_prefix, current_prefix = ARGV[${entity_id_prefix}], ARGV[${current_checks_prefix}]
local packed = ARGV[${packed}] == '1'
local out = {}
-- Whether each check has maintenance windows: nearly all have none, which one EXISTS over the
-- window keys of many checks tells at once (in chunks the Lua stack can take); a chunk where
-- some exist asks again check by check.
local sm_keys, um_keys, has_windows = {}, {}, {}
for first = 1, n, 500 do
  local last, keys = math.min(n, first + 499), {}
  for i = first, last do
    local p = ARGV[${header_len} + (i - 1) * ${args_per_check} + ${history_prefix}]
    sm_keys[i], um_keys[i] = p .. sm_sfx, p .. um_sorted_sfx
    keys[#keys + 1], keys[#keys + 2] = sm_keys[i], um_keys[i]
  end
  local any = redis.call('EXISTS', unpack(keys)) > 0
  for i = first, last do
    has_windows[i] = any and redis.call('EXISTS', sm_keys[i], um_keys[i]) > 0
  end
end
-- needs_history: whether a check read in mode with this stored state needs its last
-- notifications and state history
local function needs_history(mode, state)
  return mode == 'event' or mode == 'rollup' or (mode == 'event-ok' and state and state ~= 'ok')
end

-- enabled: 1 when the check is current (in current_checks:ENTITY), else 0
local function enabled(entity, check)
  return redis.call('ZSCORE', current_prefix .. entity, check) and 1 or 0
end

-- entity_id_of: the entity's id (all_entity_ids_by_name, else entity_id:NAME), or false; read
-- once per entity in a call (an alerting set holds many checks of few entities)
local entity_id_cache = {}
local function entity_id_of(entity)
  local id = entity_id_cache[entity]
  if id == nil then
    id = redis.call('HGET', entity_ids, entity) or redis.call('GET', entity_id_prefix .. entity) or false
    entity_id_cache[entity] = id
  end
  return id
end

-- long returns check i's whole reply; h is its check hash's HMGET.
local function long(i, h, p, mode, entity, check)
  -- Every value is set, false when absent: a nil would end the array Redis returns.
  local r = {}
  r[${state}], r[${last_change}], r[${revision}], r[${last_event_time}] = h[1], h[2], h[3], h[4]
  r[${last_sequence}], r[${initial_failure_delay}], r[${repeat_failure_delay}] = h[5], h[6], h[7]

  local sm_key, um_sorted, maintained = sm_keys[i], um_keys[i], has_windows[i]
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
  r[${sm_start}], r[${sm_end}] = sm_start, sm_end
  r[${sm_current}] = false
  if #sm > 0 then r[${sm_current}] = redis.call('GET', p .. sm_current_sfx) end

  -- unscheduled maintenance: each new one ends the previous, so the latest start decides
  local um = {}
  if maintained then um = redis.call('ZREVRANGEBYSCORE', um_sorted, now, '-inf', 'LIMIT', 0, 1) end
  r[${um_start}], r[${um_end}], r[${um_current}] = false, false, false
  if #um > 0 then
    local dur = redis.call('ZSCORE', p .. um_sfx, um[1])
    r[${um_start}] = tonumber(um[1])
    if dur then r[${um_end}] = tonumber(um[1]) + tonumber(dur) end
    r[${um_current}] = redis.call('GET', p .. um_current_sfx)
  end

  local full = needs_history(mode, h[1])
  for j = ${last_notified}, ${last_notified} - 1 + ${kinds} do r[j] = false end
  for j = ${history}, ${history} - 1 + ${history_len} * ${history_fields} do r[j] = false end
  if full then
    local last = redis.call('MGET', p .. last_sfx[1], p .. last_sfx[2], p .. last_sfx[3],
      p .. last_sfx[4], p .. last_sfx[5], p .. last_sfx[6], p .. last_sfx[7])
    for k = 1, ${kinds} do r[${last_notified} - 1 + k] = last[k] end
    local hist = redis.call('ZREVRANGE', p .. states_sfx, 0, ${history_len} - 1)
    for j = 1, #hist do
      local o = ${history} - 1 + (j - 1) * ${history_fields}
      r[o + ${hist_time}] = hist[j]
      r[o + ${hist_state}] = redis.call('GET', p .. hist[j] .. state_sfx)
      r[o + ${hist_summary}] = redis.call('GET', p .. hist[j] .. summary_sfx)
    end
  end

  r[${entity_id}] = false
  if not h[1] or mode == 'alerting' then
    r[${entity_id}] = entity_id_of(entity)
  end
  r[${summary}], r[${enabled}] = h[8], false
  if mode == 'rollup' or mode == 'alerting' then
    r[${enabled}] = enabled(entity, check)
  end
  r[${history_read}] = full and 1 or 0
  r[${details}], r[${last_notification_kind}], r[${notified_severity}] = h[9], h[10], h[11]
  r[${no_windows}] = maintained and 0 or 1
  if packed then
    for j = 1, ${slots} do
      if not r[j] then r[j] = '' end
    end
    return table.concat(r, '\31')
  end
  return r
end

local base = ${header_len}
for i = 1, n do
  local hash, p, mode = ARGV[base + ${check_hash}], ARGV[base + ${history_prefix}], ARGV[base + ${mode}]
  local entity, check = ARGV[base + ${entity}], ARGV[base + ${check}]
  base = base + ${args_per_check}
  -- model/facts_layout.go's shortSlots lists these fields in this order, for the short form
  local h
  if mode == 'alerting' then
    local a = redis.call('HMGET', hash, 'state', 'last_change', 'summary')
    h = {a[1], a[2], false, false, false, false, false, a[3], false, false, false}
  else
    h = redis.call('HMGET', hash, 'state', 'last_change', 'revision', 'last_event_time',
      'last_sequence', 'initial_failure_delay', 'repeat_failure_delay', 'summary', 'details',
      'last_notification_kind', 'notified_severity')
  end
  if packed and h[1] and not has_windows[i] and not needs_history(mode, h[1]) then
    for j = 1, 11 do
      if not h[j] then h[j] = '' end
    end
    h[12], h[13] = '', ''
    if mode == 'alerting' then
      h[12], h[13] = enabled(entity, check), entity_id_of(entity) or ''
    end
    out[i] = '\30' .. table.concat(h, '\31')
  else
    out[i] = long(i, h, p, mode, entity, check)
  end
end
if ARGV[${known_check_tags}] ~= '' then
  out[n + 1] = redis.call('SMEMBERS', ARGV[${known_check_tags}])
end
return out
