-- Apply the writes Go decided for a batch of claimed items, each atomically with the removal of
-- its item from the processing list, so a crash leaves an item's effects either fully written and
-- the item gone, or unwritten and the item still claimed. A record is guarded by the revisions
-- of the hashes its decision read (a check for the executive, contacts for the notifier): when
-- one moved since it was read (another instance got there first) nothing is written and Go
-- re-reads and decides again.
-- KEYS: none (keys are built by package schema and passed in ARGV; Cluster is not supported).
-- ARGV[1] processing list ("" when records carry no item, e.g. admin actions)
-- ARGV[2] global counters hash (event_counters) or ""
-- ARGV[3] instance counters hash (event_counters:HOST:PID) or ""
-- ARGV[4] per-minute counter (stats:events:YYYYMMDDHHMM) or ""
-- ARGV[5] its expiry in seconds
-- ARGV[6] number of records N
-- Then N records: item, guard count G, G pairs (hash key, expected "revision" field value; a
-- missing field reads as "0"), counter field ("" for none), op count M, then M ops each written
-- as: command, argument count, arguments... The ops themselves set each guard's next revision
-- (Go folds it into an HSET it sends anyway, saving a call per record).
-- Returns {statuses, errors}: N statuses, 1 applied, 0 conflict (revision moved; nothing
-- written, item kept), -1 lost (item no longer claimed by this instance: a peer requeued it;
-- nothing written); errors lists "record index: message" for writes Redis refused (e.g. a key of
-- the wrong type left by another tool). Such a record is still finished, so one bad key can
-- never wedge the queue; Go logs the error.
local allowed = {
  HSET = true, HDEL = true, HINCRBY = true, SET = true, DEL = true, EXPIRE = true,
  ZADD = true, ZREM = true, RPUSH = true, LPUSH = true, LTRIM = true, SADD = true, SREM = true,
}
local processing = ARGV[1]
local n = tonumber(ARGV[6])
local first = 7

-- refuse the whole batch before writing anything if it holds a command outside the list
local scan = first
for i = 1, n do
  scan = scan + 2 + 2 * tonumber(ARGV[scan + 1])
  local nops = tonumber(ARGV[scan + 1])
  scan = scan + 2
  for j = 1, nops do
    if not allowed[ARGV[scan]] then
      return redis.error_reply('apply: command not allowed: ' .. tostring(ARGV[scan]))
    end
    scan = scan + 2 + tonumber(ARGV[scan + 1])
  end
end

local pos = first
local status = {}
local errors = {}
local counts = {}
local counted = 0
for i = 1, n do
  local item = ARGV[pos]
  local nguards = tonumber(ARGV[pos + 1])
  local guards_at = pos + 2
  pos = guards_at + 2 * nguards
  local counter, nops = ARGV[pos], tonumber(ARGV[pos + 1])
  pos = pos + 2
  local ok = 1
  for g = 0, nguards - 1 do
    local rev = redis.call('HGET', ARGV[guards_at + 2 * g], 'revision') or '0'
    if rev ~= ARGV[guards_at + 2 * g + 1] then ok = 0 end
  end
  if ok == 1 and item ~= '' and processing ~= '' then
    if redis.call('LREM', processing, -1, item) == 0 then ok = -1 end
  end
  for j = 1, nops do
    local cmd = ARGV[pos]
    local nargs = tonumber(ARGV[pos + 1])
    if ok == 1 then
      local res = redis.pcall(cmd, unpack(ARGV, pos + 2, pos + 1 + nargs))
      if type(res) == 'table' and res.err then
        errors[#errors + 1] = i .. ': ' .. cmd .. ' ' .. tostring(ARGV[pos + 2]) .. ': ' .. res.err
      end
    end
    pos = pos + 2 + nargs
  end
  if ok == 1 then
    if counter ~= '' then
      counts[counter] = (counts[counter] or 0) + 1
      counted = counted + 1
    end
  end
  status[i] = ok
end
if counted > 0 and ARGV[4] ~= '' then
  redis.call('INCRBY', ARGV[4], counted)
  redis.call('EXPIRE', ARGV[4], ARGV[5])
end
if counted > 0 then
  for _, key in ipairs({ARGV[2], ARGV[3]}) do
    if key ~= '' then
      redis.call('HINCRBY', key, 'all', counted)
      for field, c in pairs(counts) do
        redis.call('HINCRBY', key, field, c)
      end
    end
  end
end
return {status, errors}
