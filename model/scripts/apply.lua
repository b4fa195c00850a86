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
-- ARGV[7] L > 0: the processing list's L oldest items (its tail) are exactly the records' items,
--         and each item is left out: in its place the record sends its slot, the item's place in
--         the claimed batch (0 = the oldest, at the list's tail). Newer items may sit at its head
--         (the rest of a batch applied in parts, and the items that parts before left claimed).
--         When the list's tail is not the records' items, as ARGV[8] and ARGV[9] tell (a peer
--         requeued some, taking items from the head; or an earlier part of the batch, sent ahead
--         of this call's reply, was not applied), nothing is written and the reply is the status
--         ITEMS: the caller sends the call again with the items. Else the L items go, but for
--         the items of records not applied, read by slot and put back at the head. "0": items are
--         sent.
-- ARGV[8], ARGV[9] with L > 0: the records' oldest and newest items (slots 0 and L - 1), which
--         must be the list's last and L-th last: nothing inserts items between them, so the L
--         items from the tail are then exactly the records'.
-- ARGV[10] T: the number of checks the index section after the records names ("0": no section).
-- ARGV[11] S: the number of record shapes that follow, each: counter field, count A of absent keys,
--         count F of fields, the F field names. A record of shape k names it as "Sk".
-- Then N records: item, guard count G, G pairs (hash key, expected "revision" field value; a
-- missing field reads as "0"; an empty expected value instead requires that the key does not
-- exist), counter field ("" for none), op count M, then M ops each written
-- as: command, argument count, arguments... The ops themselves set each guard's next revision
-- (Go folds it into an HSET it sends anyway, saving a call per record).
-- Or the short form of a record whose first guard is a revision on the hash its first write
-- HSETs, and whose other guards are keys that must not exist (the executive's usual record): item,
-- "H", the hash, its expected revision, the count A of absent keys, the A keys, counter field,
-- the count V of the HSET's values, the V values (field, value, ...), then op count M and the M
-- other ops as above. Or the shaped form of a short-form record without other ops whose counter,
-- absent key count and HSET field names are those of shape k: item, "Sk", the hash, its expected
-- revision, the A absent keys, the F values. Every argument costs Redis about 0.15 µs to receive,
-- hand to Lua and free; the executive's usual record takes 19 in the generic form, 16 in the
-- short form and 9 shaped.
-- A batch's items leave the processing list together: one LRANGE tells which records' items are
-- still claimed, and the list is rewritten once (DEL, RPUSH of what stays) instead of one LREM
-- per item, which cost a call from Lua per event. Small batches (the notifier's one record) and a
-- list much longer than the batch (one event of a check applied while its later events wait)
-- keep the LREM per item, cheaper there.
-- A record guarding a key that a record before it in the call also guarded, and which was not
-- applied, is not applied either: its expected revision counts on the earlier record's bump, and
-- a bump by someone else must not pass for it.
-- The index section (docs/flapjack-1x.md 2.3): the keys all_checks and current_entities, the score (the
-- batch's now), the entity count E, then per entity: its name (member of current_entities), its
-- keys all_checks:ENTITY and current_checks:ENTITY, its check count K and K triples: the index
-- (1-based) of the record that touched the check, the check's name (member of the entity's two
-- keys) and id (member of all_checks). A check is marked current only when its record applied;
-- each member is sent once and each index gets one ZADD (in slices the Lua stack can take).
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
local touched = tonumber(ARGV[10])
local first = 12

-- shapes by marker; buf holds the HSET's field names at its odd places, a record's values go
-- in between
local shapes = {}
for k = 1, tonumber(ARGV[11]) do
  local nabsent, nfields = tonumber(ARGV[first + 1]), tonumber(ARGV[first + 2])
  local buf = {}
  for f = 1, nfields do
    buf[2 * f - 1] = ARGV[first + 2 + f]
  end
  shapes['S' .. k] = {counter = ARGV[first], absent = nabsent, fields = nfields, buf = buf}
  first = first + 3 + nfields
end

-- layout tells where the parts of the record at pos are: the hash of a short or shaped form
-- (false for the generic form), the first and last argument of its guards (generic: pairs of key
-- and expected value; short and shaped: the absent keys), where its HSET's values start and how
-- many there are (short form: fields and values; shaped: values), its counter, its op count,
-- where its ops start, and its shape (false for none).
local function layout(pos)
  local form = ARGV[pos + 1]
  local shape = shapes[form]
  if shape then
    local guards = pos + 4
    local values = guards + shape.absent
    return ARGV[pos + 2], guards, values - 1, values, shape.fields, shape.counter, 0, values + shape.fields, shape
  end
  if form == 'H' then
    local guards = pos + 5
    local guards_end = guards + tonumber(ARGV[pos + 4]) - 1
    local nvalues = tonumber(ARGV[guards_end + 2])
    local values = guards_end + 3
    local ops = values + nvalues
    return ARGV[pos + 2], guards, guards_end, values, nvalues, ARGV[guards_end + 1], tonumber(ARGV[ops]), ops + 1, false
  end
  local guards = pos + 2
  local guards_end = guards + 2 * tonumber(form) - 1
  return false, guards, guards_end, 0, 0, ARGV[guards_end + 1], tonumber(ARGV[guards_end + 2]), guards_end + 3, false
end

-- refuse the whole batch before writing anything if it holds a command outside the list; gather
-- the keys that must not exist on the way
local absent = {}
local scan = first
for i = 1, n do
  local hash, guards, guards_end, _, _, _, nops, ops = layout(scan)
  for g = guards, guards_end, hash and 1 or 2 do
    if hash or ARGV[g + 1] == '' then absent[#absent + 1] = ARGV[g] end
  end
  scan = ops
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

-- keys guarded by a record that was not applied
local unapplied = {}
local errors = {}

-- holds reports whether the guard on key (expected revision, or "" for absent) holds.
local function holds(key, expected)
  if unapplied[key] then
    return false
  end
  if expected == '' then
    return not (some_exist and redis.call('EXISTS', key) == 1)
  end
  -- pcall: a guarded key of the wrong type (left by another tool) makes its record a conflict,
  -- re-read by Go, instead of aborting the call after earlier records' writes
  local rev = redis.pcall('HGET', key, 'revision')
  return type(rev) ~= 'table' and (rev or '0') == expected
end

-- write runs cmd key args[from..to] for record i, noting a refusal.
local function write(i, cmd, key, args, from, to)
  local res = redis.pcall(cmd, key, unpack(args, from, to))
  if type(res) == 'table' and res.err then
    errors[#errors + 1] = i .. ': ' .. cmd .. ' ' .. tostring(key) .. ': ' .. res.err
  end
end

-- Items left out: the list's tail holds the records' items, unless a peer requeued some or an
-- earlier part still holds the tail.
if whole > 0 and (redis.call('LLEN', processing) < whole or redis.call('LINDEX', processing, -1) ~= ARGV[8]
    or redis.call('LINDEX', processing, -whole) ~= ARGV[9]) then
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
local counts = {}
local counted = 0
for i = 1, n do
  local item = ARGV[pos]
  local hash, guards, guards_end, values, nvalues, counter, nops, ops, shape = layout(pos)
  -- a short or shaped record's guards after its hash's are absent keys; a generic record's are
  -- pairs of key and expected value
  local step = hash and 1 or 2
  local ok = 1
  if hash and not holds(hash, ARGV[pos + 3]) then
    ok = 0
  end
  for g = guards, guards_end, step do
    if not holds(ARGV[g], hash and '' or ARGV[g + 1]) then
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
  if ok == 1 and shape then
    local buf = shape.buf
    for f = 1, nvalues do
      buf[2 * f] = ARGV[values + f - 1]
    end
    write(i, 'HSET', hash, buf, 1, 2 * nvalues)
  elseif ok == 1 and hash then
    write(i, 'HSET', hash, ARGV, values, values + nvalues - 1)
  end
  pos = ops
  for j = 1, nops do
    local cmd, nargs = ARGV[pos], tonumber(ARGV[pos + 1])
    if ok == 1 then
      write(i, cmd, ARGV[pos + 2], ARGV, pos + 3, pos + 1 + nargs)
    end
    pos = pos + 2 + nargs
  end
  if ok ~= 1 then
    if hash then
      unapplied[hash] = true
    end
    for g = guards, guards_end, step do
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
  -- LPUSH in claim order leaves the newest claim, the highest slot, nearest the head
  table.sort(kept)
  local keep = {}
  for i, slot in ipairs(kept) do
    keep[i] = redis.call('LINDEX', processing, -(slot + 1))
  end
  redis.call('LTRIM', processing, 0, -(whole + 1))
  for at = 1, #keep, 1000 do
    redis.call('LPUSH', processing, unpack(keep, at, math.min(at + 999, #keep)))
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
if touched > 0 then
  local all_checks, current_entities, score, nentities = ARGV[pos], ARGV[pos + 1], ARGV[pos + 2], tonumber(ARGV[pos + 3])
  -- zadd adds scored (score, member, ...), n values, in slices the Lua stack can take
  local function zadd(key, scored, n)
    for at = 1, n, 1000 do
      local res = redis.pcall('ZADD', key, unpack(scored, at, math.min(at + 999, n)))
      if type(res) == 'table' and res.err then
        errors[#errors + 1] = 'indexes: ZADD ' .. key .. ': ' .. res.err
      end
    end
  end
  pos = pos + 4
  local ids, nids, names, nnames = {}, 0, {}, 0
  for e = 1, nentities do
    local count = tonumber(ARGV[pos + 3])
    local checks, nchecks = {}, 0
    for m = pos + 4, pos + 1 + 3 * count, 3 do
      if status[tonumber(ARGV[m])] == 1 then
        checks[nchecks + 1], checks[nchecks + 2] = score, ARGV[m + 1]
        ids[nids + 1], ids[nids + 2] = score, ARGV[m + 2]
        nchecks, nids = nchecks + 2, nids + 2
      end
    end
    if nchecks > 0 then
      zadd(ARGV[pos + 1], checks, nchecks)
      zadd(ARGV[pos + 2], checks, nchecks)
      names[nnames + 1], names[nnames + 2] = score, ARGV[pos]
      nnames = nnames + 2
    end
    pos = pos + 4 + 3 * count
  end
  zadd(all_checks, ids, nids)
  zadd(current_entities, names, nnames)
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
