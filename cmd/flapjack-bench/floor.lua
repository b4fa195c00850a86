-- The least a guarded apply can do for a batch of ok results on ok checks (flapjack-bench's
-- floor): one EXISTS over every event's two window keys, then per event the revision guard and
-- the check hash's HSET, then one ZADD per index. It keeps no item, counter or error.
-- KEYS: none.
-- ARGV[1] score (now), ARGV[2] N events, ARGV[3] all_checks, ARGV[4] current_entities, then per
-- event: check hash, scheduled_maintenances key, sorted_unscheduled_maintenance_timestamps key,
-- expected revision, new revision, sequence, all_checks:ENTITY, current_checks:ENTITY, entity,
-- check name, check id.
-- Returns the number of events applied.
local now, n = ARGV[1], tonumber(ARGV[2])
local width = 11
local absent = {}
for i = 0, n - 1 do
  local at = 5 + i * width
  absent[#absent + 1] = ARGV[at + 1]
  absent[#absent + 1] = ARGV[at + 2]
end
local exist = redis.call('EXISTS', unpack(absent))
local all, current, members, order = {}, {}, {}, {}
local applied = 0
for i = 0, n - 1 do
  local at = 5 + i * width
  local key = ARGV[at]
  if exist == 0 and (redis.call('HGET', key, 'revision') or '0') == ARGV[at + 3] then
    redis.call('HSET', key, 'last_update', now, 'last_sequence', ARGV[at + 5], 'revision', ARGV[at + 4])
    applied = applied + 1
    all[#all + 1] = now
    all[#all + 1] = ARGV[at + 10]
    local e = ARGV[at + 8]
    if not members[e] then
      members[e] = {}
      order[#order + 1] = at
      current[#current + 1] = now
      current[#current + 1] = e
    end
    local m = members[e]
    m[#m + 1] = now
    m[#m + 1] = ARGV[at + 9]
  end
end
if applied > 0 then
  redis.call('ZADD', ARGV[3], unpack(all))
  for _, at in ipairs(order) do
    local m = members[ARGV[at + 8]]
    redis.call('ZADD', ARGV[at + 6], unpack(m))
    redis.call('ZADD', ARGV[at + 7], unpack(m))
  end
  redis.call('ZADD', ARGV[4], unpack(current))
end
return applied
