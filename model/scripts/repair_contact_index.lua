-- Make all_contacts and the contact:ID hashes agree for some contact ids (RepairContactIndex):
-- an id whose contact:ID is a hash (how Flapjack 1.6 finds contacts; it writes no index) joins
-- all_contacts; a member of all_contacts without a contact:ID key gets the hash with an empty
-- first_name, the field 1.6 looks for, so 1.6's tools find it too. Each id is decided on what
-- Redis holds when the script runs, so a contact deleted meanwhile is not brought back.
-- KEYS: none (keys are built by package schema and passed in ARGV; Cluster is not supported).
-- ARGV: the all_contacts key, then pairs of contact id and that id's contact:ID key.
-- Returns the number of ids changed.
local all = ARGV[1]
local changed = 0
for i = 2, #ARGV, 2 do
  local id, key = ARGV[i], ARGV[i + 1]
  local typ = redis.call('TYPE', key)['ok']
  if typ == 'hash' then
    changed = changed + redis.call('SADD', all, id)
  elseif typ == 'none' and redis.call('SISMEMBER', all, id) == 1 then
    redis.call('HSET', key, 'first_name', '')
    changed = changed + 1
  end
end
return changed
