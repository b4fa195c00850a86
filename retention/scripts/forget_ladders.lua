-- Forget stopped escalation ladders whose restart window has passed, atomically with the removal
-- of their index entries, so a notifier resuming or restarting a ladder at the same moment either
-- sees it whole or not at all (its guarded write then conflicts and re-reads).
-- A ladder stopped before those it paged were told (a tick saw maintenance or a disabled check)
-- is kept while its check is still failing, so the recovery still reaches them; it is looked at
-- again a restart window later.
-- KEYS: none (keys come from package schema and are passed in ARGV; Cluster is not supported).
-- ARGV[1] now (unix seconds, from the injected clock)
-- ARGV[2] escalations_stopped (the index)   ARGV[3] escalations_due
-- ARGV[4] number of ladders N, then N records of 6 values:
--   member (POLICY:ENTITY:CHECK), ladder hash, check_escalations:ENTITY:CHECK, check:ENTITY:CHECK,
--   policy id, the policy's restart window in seconds (0: the policy is gone)
-- Returns the number of ladders removed.
local now = tonumber(ARGV[1])
local index, due = ARGV[2], ARGV[3]
local n = tonumber(ARGV[4])
local removed = 0
for i = 0, n - 1 do
  local at = 5 + i * 6
  local member, ladder, of_check, check = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
  local policy, window = ARGV[at + 4], tonumber(ARGV[at + 5])
  local h = redis.call('HMGET', ladder, 'started_at', 'stopped_at', 'told', 'alerted')
  local stopped = tonumber(h[2] or '0') or 0
  if not h[1] or stopped == 0 then
    -- gone, or in progress again: not ours to forget
    redis.call('ZREM', index, member)
  elseif stopped + window > now then
    redis.call('ZADD', index, stopped + window, member)
  else
    local state = redis.call('HGET', check, 'state')
    local failing = state == 'warning' or state == 'critical' or state == 'unknown'
    if h[3] == '1' or not h[4] or h[4] == '[]' or not failing then
      redis.call('DEL', ladder)
      redis.call('SREM', of_check, policy)
      redis.call('ZREM', index, member)
      redis.call('ZREM', due, member)
      removed = removed + 1
    else
      redis.call('ZADD', index, now + math.max(window, 60), member)
    end
  end
end
return removed
