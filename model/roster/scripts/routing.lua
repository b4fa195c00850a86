-- Read everything routing notifications of one or more checks needs, in one call: for each
-- check its entity's id, the contacts interested in it (each once, in Flapjack's order), the
-- entity's on-call schedules and the contacts its schedules alerted for the current failure,
-- and once for all checks the schedules' definitions and every contact named (interested, a
-- member, override or fallback of a schedule, or alerted by one) with its data, alert state and
-- rules (a contact named by several checks of a batch is read once). Read-only; the notifier
-- decides who is on call and routes.
-- KEYS: none (key names come from package schema: the global keys and the prefixes of each key
-- family, to which ids are appended).
-- ARGV[1] all_entity_ids_by_name   ARGV[2] prefix of entity_id:NAME
-- ARGV[3] prefix of contacts_for:  ARGV[4] the pseudo entity id of contacts_for:ALL
-- ARGV[5..12] prefixes of contact:, contact_media:, contact_tz:, contact_media_intervals:,
--   contact_media_rollup_thresholds:, contact_pagerduty:, contact_notification_rules:,
--   contact_alert_state:
-- ARGV[13] prefix of notification_rule:
-- ARGV[14] escalation_policies, or "" when no check needs escalations
-- ARGV[15] prefix of entity_schedules:   ARGV[16] schedules
-- ARGV[17] the number of checks N, then four values per check: entity name, check name, the
--   check's check_escalations:ID ("" when the check does not need escalations), and its
--   schedule_alerted:ID
-- Returns {escalation policies, check 1, ..., check N, contacts, schedules}: the escalation
-- policies are an HGETALL reply (false when ARGV[14] is ""); each check is {entity id or false,
-- ladder policies (an SMEMBERS reply, or false), schedule_alerted (an HGETALL reply), the
-- entity's schedule ids (sorted), the contact ids its schedules and schedule_alerted name,
-- contact id, contact id, ...}; contacts is a list of {id, contact hash, media hash, timezone,
-- intervals hash, thresholds hash, pagerduty hash, alert state hash, {rule id, rule hash, ...}},
-- one per contact named by any check, with hashes as flat field/value arrays (HGETALL replies);
-- schedules is {id, JSON, id, JSON, ...} of every schedule named that exists.
local n = tonumber(ARGV[17])
local out = {false}
if ARGV[14] ~= '' then
  out[1] = redis.call('HGETALL', ARGV[14])
end
local eids = {}
local wanted, order = {}, {}
local function want(m)
  if not wanted[m] then
    wanted[m] = true
    order[#order + 1] = m
  end
end
-- schedule id -> list of the contacts it names (false: no such schedule)
local schedules, scheduleOrder = {}, {}
local function scheduleContacts(id)
  local known = schedules[id]
  if known ~= nil then
    return known
  end
  local raw = redis.call('HGET', ARGV[16], id)
  local names = false
  if raw then
    scheduleOrder[#scheduleOrder + 1] = id
    scheduleOrder[#scheduleOrder + 1] = raw
    names = {}
    local ok, s = pcall(cjson.decode, raw)
    if ok and type(s) == 'table' then
      for _, l in ipairs(type(s.layers) == 'table' and s.layers or {}) do
        for _, m in ipairs(type(l.members) == 'table' and l.members or {}) do
          names[#names + 1] = m
        end
      end
      for _, o in ipairs(type(s.overrides) == 'table' and s.overrides or {}) do
        names[#names + 1] = o.contact
      end
      for _, f in ipairs(type(s.fallback) == 'table' and s.fallback or {}) do
        names[#names + 1] = f
      end
    end
  end
  schedules[id] = names
  return names
end
for i = 1, n do
  local at = 17 + (i - 1) * 4
  local entity, check, ladders, alertedKey = ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 4]
  local eid = eids[entity]
  if eid == nil then
    eid = redis.call('HGET', ARGV[1], entity) or redis.call('GET', ARGV[2] .. entity) or false
    eids[entity] = eid
  end
  local sets = {ARGV[3] .. ARGV[4]}
  local scheduleIDs = {}
  if eid then
    sets = {ARGV[3] .. eid, ARGV[3] .. ARGV[4], ARGV[3] .. eid .. ':' .. check}
    scheduleIDs = redis.call('SMEMBERS', ARGV[15] .. eid)
    table.sort(scheduleIDs)
  end
  local alerted = redis.call('HGETALL', alertedKey)
  local c = {eid, false, alerted, scheduleIDs, {}}
  if ladders ~= '' then
    c[2] = redis.call('SMEMBERS', ladders)
  end
  local named, seenNamed = c[5], {}
  local function name(m)
    if type(m) == 'string' and not seenNamed[m] then
      seenNamed[m] = true
      named[#named + 1] = m
      want(m)
    end
  end
  for _, sid in ipairs(scheduleIDs) do
    for _, m in ipairs(scheduleContacts(sid) or {}) do
      name(m)
    end
  end
  for j = 1, #alerted, 2 do
    name(alerted[j])
  end
  local seen = {}
  for _, key in ipairs(sets) do
    local members = redis.call('SMEMBERS', key)
    table.sort(members)
    for _, m in ipairs(members) do
      if not seen[m] then
        seen[m] = true
        c[#c + 1] = m
        want(m)
      end
    end
  end
  out[i + 1] = c
end
local contacts = {}
for _, id in ipairs(order) do
  local c = {id,
    redis.call('HGETALL', ARGV[5] .. id), redis.call('HGETALL', ARGV[6] .. id),
    redis.call('GET', ARGV[7] .. id) or false, redis.call('HGETALL', ARGV[8] .. id),
    redis.call('HGETALL', ARGV[9] .. id), redis.call('HGETALL', ARGV[10] .. id),
    redis.call('HGETALL', ARGV[12] .. id)}
  local rule_ids = redis.call('SMEMBERS', ARGV[11] .. id)
  table.sort(rule_ids)
  local rules = {}
  for _, rid in ipairs(rule_ids) do
    rules[#rules + 1] = rid
    rules[#rules + 1] = redis.call('HGETALL', ARGV[13] .. rid)
  end
  c[9] = rules
  contacts[#contacts + 1] = c
end
out[n + 2] = contacts
out[n + 3] = scheduleOrder
return out
