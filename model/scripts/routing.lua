-- Read everything routing one notification needs in one round trip: the entity's id, the
-- contacts interested in the check (each once, in Flapjack's order), and every contact's data,
-- alert state and rules. Read-only; the notifier decides.
-- KEYS: none (key names come from package schema: the global keys and the prefixes of each key
-- family, to which ids are appended).
-- ARGV[1] entity name              ARGV[2] check name
-- ARGV[3] all_entity_ids_by_name   ARGV[4] prefix of entity_id:NAME
-- ARGV[5] prefix of contacts_for:  ARGV[6] the pseudo entity id of contacts_for:ALL
-- ARGV[7..14] prefixes of contact:, contact_media:, contact_tz:, contact_media_intervals:,
--   contact_media_rollup_thresholds:, contact_pagerduty:, contact_notification_rules:,
--   contact_alert_state:
-- ARGV[15] prefix of notification_rule:
-- ARGV[16] escalation_policies, or "" when the caller does not need escalations
-- ARGV[17] the check's check_escalations:ID (read with ARGV[16])
-- Returns {entity id or false, escalation policies, the check's ladder policies, contact 1,
-- contact 2, ...}; the escalation policies are an HGETALL reply and the ladder policies an
-- SMEMBERS reply (both false when ARGV[16] is ""); each contact is
-- {id, contact hash, media hash, timezone, intervals hash, thresholds hash, pagerduty hash,
--  alert state hash, {rule id, rule hash, rule id, rule hash, ...}} with hashes as flat
-- field/value arrays (HGETALL replies).
local entity, check = ARGV[1], ARGV[2]
local eid = redis.call('HGET', ARGV[3], entity) or redis.call('GET', ARGV[4] .. entity)
local sets = {ARGV[5] .. ARGV[6]}
if eid then
  sets = {ARGV[5] .. eid, ARGV[5] .. ARGV[6], ARGV[5] .. eid .. ':' .. check}
end
local ids, seen = {}, {}
for _, key in ipairs(sets) do
  local members = redis.call('SMEMBERS', key)
  table.sort(members)
  for _, m in ipairs(members) do
    if not seen[m] then
      seen[m] = true
      ids[#ids + 1] = m
    end
  end
end
local out = {eid or false, false, false}
if ARGV[16] ~= '' then
  out[2], out[3] = redis.call('HGETALL', ARGV[16]), redis.call('SMEMBERS', ARGV[17])
end
for _, id in ipairs(ids) do
  local c = {id,
    redis.call('HGETALL', ARGV[7] .. id), redis.call('HGETALL', ARGV[8] .. id),
    redis.call('GET', ARGV[9] .. id) or false, redis.call('HGETALL', ARGV[10] .. id),
    redis.call('HGETALL', ARGV[11] .. id), redis.call('HGETALL', ARGV[12] .. id),
    redis.call('HGETALL', ARGV[14] .. id)}
  local rule_ids = redis.call('SMEMBERS', ARGV[13] .. id)
  table.sort(rule_ids)
  local rules = {}
  for _, rid in ipairs(rule_ids) do
    rules[#rules + 1] = rid
    rules[#rules + 1] = redis.call('HGETALL', ARGV[15] .. rid)
  end
  c[9] = rules
  out[#out + 1] = c
end
return out
