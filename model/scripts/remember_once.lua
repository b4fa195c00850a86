-- Remember a member of a sorted set once: forget the members scored before a cutoff, then add
-- the member unless it is already there. Used to refuse a replayed request within the window its
-- timestamp is accepted in (the score is the request's time, so the set holds one window).
-- KEYS: none (the key comes from package schema in ARGV; Cluster is not supported).
-- ARGV[1] the sorted set   ARGV[2] the member   ARGV[3] its score   ARGV[4] forget scores below
-- Returns 1 when the member is new (now remembered), 0 when it was seen.
local set, member = ARGV[1], ARGV[2]
redis.call('ZREMRANGEBYSCORE', set, '-inf', '(' .. ARGV[4])
if redis.call('ZSCORE', set, member) then
  return 0
end
redis.call('ZADD', set, ARGV[3], member)
return 1
