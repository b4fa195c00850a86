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
-- ARGV[7] L > 0: the processing list holds exactly the records' items, L of them, and each item is
--         left out: in its place the record sends its slot, the item's place in the claimed
--         batch (0 = the oldest, at the list's tail). When the list's length differs nothing is
--         written and the reply is the status ITEMS: the caller sends the call again with the
--         items. Else the list goes, but for the items of records not applied, read by slot.
--         "0": items are sent.
-- Then N records: item, guard count G, G pairs (hash key, expected "revision" field value; a
-- missing field reads as "0"; an empty expected value instead requires that the key does not
-- exist), counter field ("" for none), op count M, then M ops each written
-- as: command, argument count, arguments... The ops themselves set each guard's next revision
-- (Go folds it into an HSET it sends anyway, saving a call per record).
-- A batch's items leave the processing list together: one LRANGE tells which records' items are
-- still claimed, and the list is rewritten once (DEL, RPUSH of what stays) instead of one LREM
-- per item, which cost a call from Lua per event. Small batches (the notifier's one record) and a
-- list much longer than the batch (one event of a check applied while its later events wait)
-- keep the LREM per item, cheaper there.
-- A record guarding a key that a record before it in the call also guarded, and which was not
-- applied, is not applied either: its expected revision counts on the earlier record's bump, and
-- a bump by someone else must not pass for it.
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
local whole = tonumber(ARGV[7])
local first = 8

-- refuse the whole batch before writing anything if it holds a command outside the list; gather
-- the keys that must not exist on the way
local absent = {}
local scan = first
for i = 1, n do
  local nguards = tonumber(ARGV[scan + 1])
  for g = scan + 2, scan + 2 * nguards, 2 do
    if ARGV[g + 1] == '' then absent[#absent + 1] = ARGV[g] end
  end
  scan = scan + 2 + 2 * nguards
  local nops = tonumber(ARGV[scan + 1])
  scan = scan + 2
  for j = 1, nops do
    if not allowed[ARGV[scan]] then
      return redis.error_reply('apply: command not allowed: ' .. tostring(ARGV[scan]))
    end
    scan = scan + 2 + tonumber(ARGV[scan + 1])
  end
end

-- Nearly always none of the keys that must not exist does, which one EXISTS over all of them tells
-- (in slices the Lua stack can take); only then is each asked again.
local some_exist = false
for at = 1, #absent, 1000 do
  if redis.call('EXISTS', unpack(absent, at, math.min(at + 999, #absent))) > 0 then
    some_exist = true
    break
  end
end

-- guardHolds reports whether the guard at ARGV[g] (key, expected revision or "" for absent) holds.
local function guardHolds(g)
  local expected = ARGV[g + 1]
  if expected == '' then
    return not (some_exist and redis.call('EXISTS', ARGV[g]) == 1)
  end
  -- pcall: a guarded key of the wrong type (left by another tool) makes its record a conflict,
  -- re-read by Go, instead of aborting the call after earlier records' writes
  local rev = redis.pcall('HGET', ARGV[g], 'revision')
  return type(rev) ~= 'table' and (rev or '0') == expected
end

-- Items left out: the list holds the batch and nothing else, so every record's item is still
-- claimed; a peer that requeued any of them would have shortened it.
if whole > 0 and redis.call('LLEN', processing) ~= whole then
  return redis.status_reply('ITEMS')
end
-- slots of the records not applied (items left out), whose items stay claimed
local kept = {}

-- claimed[item] counts the copies of item still in the processing list, when it was read whole
local claimed = false
local listed = {}
local taken = 0
if processing ~= '' and n >= 8 and whole == 0 then
  -- one element more than the bound tells a list too long for the rewrite
  listed = redis.call('LRANGE', processing, 0, 2 * n)
  if #listed <= 2 * n then
    claimed = {}
    for _, it in ipairs(listed) do
      claimed[it] = (claimed[it] or 0) + 1
    end
  else
    listed = {}
  end
end

local pos = first
local status = {}
-- keys guarded by a record that was not applied
local unapplied = {}
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
  for g = guards_at, guards_at + 2 * nguards - 2, 2 do
    if unapplied[ARGV[g]] or not guardHolds(g) then
      ok = 0
    end
  end
  if whole > 0 then
    if ok ~= 1 and item ~= '' then
      kept[#kept + 1] = tonumber(item)
    end
  elseif ok == 1 and item ~= '' and processing ~= '' then
    if claimed then
      local c = claimed[item]
      if c and c > 0 then
        claimed[item] = c - 1
        taken = taken + 1
      else
        ok = -1
      end
    elseif redis.call('LREM', processing, -1, item) == 0 then
      ok = -1
    end
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
  if ok ~= 1 then
    for g = guards_at, guards_at + 2 * nguards - 2, 2 do
      unapplied[ARGV[g]] = true
    end
  end
  if ok == 1 then
    if counter ~= '' then
      counts[counter] = (counts[counter] or 0) + 1
      counted = counted + 1
    end
  end
  status[i] = ok
end
-- rewrite the processing list without the finished items, in its order (claimed now counts the
-- copies of each item that stay)
if whole > 0 then
  -- in the list's order: the newest claim, the highest slot, at its head
  table.sort(kept, function(a, b) return a > b end)
  local keep = {}
  for i, slot in ipairs(kept) do
    keep[i] = redis.call('LINDEX', processing, -(slot + 1))
  end
  redis.call('DEL', processing)
  for at = 1, #keep, 1000 do
    redis.call('RPUSH', processing, unpack(keep, at, math.min(at + 999, #keep)))
  end
elseif taken > 0 then
  redis.call('DEL', processing)
  if taken < #listed then
    local keep = {}
    for _, it in ipairs(listed) do
      local c = claimed[it]
      if c > 0 then
        keep[#keep + 1] = it
        claimed[it] = c - 1
      end
    end
    -- in slices: unpack puts its values on the Lua stack, which holds about 8000
    for at = 1, #keep, 1000 do
      redis.call('RPUSH', processing, unpack(keep, at, math.min(at + 999, #keep)))
    end
  end
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
