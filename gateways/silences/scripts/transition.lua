-- Moves one check's mirrored acknowledgement from what the watcher read to what it wants, and
-- queues the job that makes Alertmanager follow, only if no other watcher moved it first.
-- KEYS[1] alertmanager_silences, KEYS[2] the silence queue
-- ARGV[1] ENTITY:CHECK, ARGV[2] the value read ("" = absent), ARGV[3] the new value ("" =
-- remove), ARGV[4...] the jobs
local current = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if current ~= ARGV[2] then
  return 0
end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
for i = 4, #ARGV do
  redis.call('RPUSH', KEYS[2], ARGV[i])
end
return 1
