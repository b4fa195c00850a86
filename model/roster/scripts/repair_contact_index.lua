-- Make all_contacts agree with the contact:ID hashes for some contact ids (RepairContactIndex).
-- An id whose contact:ID is a hash (how Flapjack 1.6 finds contacts; it keeps no index) joins
-- all_contacts. A member of all_contacts without a contact:ID key gets the hash, with an empty
-- first_name (the field 1.6 looks for), when any other key of its own data is left, and leaves
-- the index when none is (1.6 deleted it). Each id is decided on what Redis holds when the script
-- runs, so a contact deleted meanwhile is not brought back.
-- KEYS: none (keys are built by package schema and passed in ARGV; Cluster is not supported).
-- ARGV: the all_contacts key, N, then per id: the id and its N own keys, contact:ID first.
-- Returns the number of ids changed.
local all, n = ARGV[1], tonumber(ARGV[2])
local changed = 0
for i = 3, #ARGV, n + 1 do
  local id, key = ARGV[i], ARGV[i + 1]
  local typ = redis.call('TYPE', key)['ok']
  if typ == 'hash' then
    changed = changed + redis.call('SADD', all, id)
  elseif typ == 'none' and redis.call('SISMEMBER', all, id) == 1 then
    local left = 0
    for k = i + 2, i + n do
      left = left + redis.call('EXISTS', ARGV[k])
    end
    if left > 0 then
      redis.call('HSET', key, 'first_name', '')
    else
      redis.call('SREM', all, id)
    end
    changed = changed + 1
  end
end
return changed
