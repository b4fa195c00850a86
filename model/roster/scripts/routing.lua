-- Read everything routing notifications of one or more checks needs, in one call: for each
-- check its entity's id and the contacts interested in it (each once, in Flapjack's order), and
-- once for all checks every such contact's data, alert state and rules (a contact interested in
-- several checks of a batch is read once). Read-only; the notifier decides.
-- KEYS: none (key names come from package schema: the global keys and the prefixes of each key
-- family, to which ids are appended).
-- ARGV[1] all_entity_ids_by_name   ARGV[2] prefix of entity_id:NAME
-- ARGV[3] prefix of contacts_for:  ARGV[4] the pseudo entity id of contacts_for:ALL
-- ARGV[5..12] prefixes of contact:, contact_media:, contact_tz:, contact_media_intervals:,
--   contact_media_rollup_thresholds:, contact_pagerduty:, contact_notification_rules:,
--   contact_alert_state:
-- ARGV[13] prefix of notification_rule:
-- ARGV[14] escalation_policies, or "" when no check needs escalations
-- ARGV[15] the number of checks N, then three values per check: entity name, check name, and
--   the check's check_escalations:ID ("" when the check does not need escalations)
-- Returns {escalation policies, check 1, ..., check N, contacts}: the escalation policies are an
-- HGETALL reply (false when ARGV[14] is ""); each check is {entity id or false, ladder policies
-- (an SMEMBERS reply, or false), contact id, contact id, ...}; contacts is a list of
-- {id, contact hash, media hash, timezone, intervals hash, thresholds hash, pagerduty hash,
--  alert state hash, {rule id, rule hash, rule id, rule hash, ...}}, one per contact named by
-- any check, with hashes as flat field/value arrays (HGETALL replies).
local n = tonumber(ARGV[15])
local out = {false}
if ARGV[14] ~= '' then
  out[1] = redis.call('HGETALL', ARGV[14])
end
local eids = {}
local wanted, order = {}, {}
for i = 1, n do
  local at = 15 + (i - 1) * 3
  local entity, check, ladders = ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
  local eid = eids[entity]
  if eid == nil then
    eid = redis.call('HGET', ARGV[1], entity) or redis.call('GET', ARGV[2] .. entity) or false
    eids[entity] = eid
  end
  local sets = {ARGV[3] .. ARGV[4]}
  if eid then
    sets = {ARGV[3] .. eid, ARGV[3] .. ARGV[4], ARGV[3] .. eid .. ':' .. check}
  end
  local c = {eid, false}
  if ladders ~= '' then
    c[2] = redis.call('SMEMBERS', ladders)
  end
  local seen = {}
  for _, key in ipairs(sets) do
    local members = redis.call('SMEMBERS', key)
    table.sort(members)
    for _, m in ipairs(members) do
      if not seen[m] then
        seen[m] = true
        c[#c + 1] = m
        if not wanted[m] then
          wanted[m] = true
          order[#order + 1] = m
        end
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
return out
