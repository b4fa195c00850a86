-- Move the data of an entity's checks from its old name to its new one (Flapjack 1.6
-- Entity.rename), merging with what the new name already holds (Entity.merge). Go lists every
-- move, reading what it lists under WATCH, and sends this script inside the same MULTI/EXEC as
-- the entity's name writes, so a concurrent write to any of it (an executive processing an
-- event bumps the check hash) makes the whole rename retry, and nothing is half moved.
-- KEYS: none (keys are built by package schema and passed in ARGV; Cluster is not supported).
-- ARGV: a sequence of moves, each an op name followed by its fixed arguments:
--   key KIND SRC DST         move key SRC to DST (RENAME, which keeps a TTL); when DST exists
--                            too, merge by KIND and delete SRC:
--                              zset  union, a member's larger score wins (AGGREGATE MAX)
--                              list  timestamps of both, in ascending numeric order
--                              hash  SRC's fields DST lacks are added (HSETNX)
--                              keep  DST is kept as it is
--                              max   the larger number is kept
--                              ttl   the key that expires last is kept, with its TTL
--   check SRC DST FAILED SRCID DSTID
--                            a check hash: moved, or on merge the one with the newer
--                            last_update wins whole and its revision moves past both (a moved
--                            hash without one gets 1), so executives that read either re-read;
--                            FAILED (failed_checks) membership of SRCID moves to DSTID when
--                            SRC's hash is kept, and is dropped otherwise
--   zmember KEY SRC DST      move sorted-set member SRC to DST, keeping the larger score
--   smember KEY SRC DST      move set member SRC to DST
--   ack BYID BYHASH SRCID DSTID SRCHASH DSTHASH
--                            move the acknowledgement hash entries of a check
-- Returns the number of moves done.
local width = { key = 3, check = 5, zmember = 3, smember = 3, ack = 6 }

local function exists(k) return redis.call('EXISTS', k) == 1 end

local function push(k, vals)
  for i = 1, #vals, 1000 do
    redis.call('RPUSH', k, unpack(vals, i, math.min(i + 999, #vals)))
  end
end

local function num(v) return tonumber(v) or 0 end

local function merge_key(kind, src, dst)
  if kind == 'zset' then
    redis.call('ZUNIONSTORE', dst, 2, dst, src, 'AGGREGATE', 'MAX')
  elseif kind == 'list' then
    local all = redis.call('LRANGE', dst, 0, -1)
    for _, v in ipairs(redis.call('LRANGE', src, 0, -1)) do all[#all + 1] = v end
    table.sort(all, function(a, b) return num(a) < num(b) end)
    redis.call('DEL', dst)
    push(dst, all)
  elseif kind == 'hash' then
    local f = redis.call('HGETALL', src)
    for i = 1, #f, 2 do redis.call('HSETNX', dst, f[i], f[i + 1]) end
  elseif kind == 'max' then
    if num(redis.call('GET', src)) > num(redis.call('GET', dst)) then
      redis.call('RENAME', src, dst)
      return
    end
  elseif kind == 'ttl' then
    local s, d = redis.call('PTTL', src), redis.call('PTTL', dst)
    if d >= 0 and (s < 0 or s > d) then
      redis.call('RENAME', src, dst)
      return
    end
  elseif kind ~= 'keep' then
    return redis.error_reply('rename_entity: unknown kind ' .. kind)
  end
  redis.call('DEL', src)
end

local function updated(h) return num(redis.call('HGET', h, 'last_update') or redis.call('HGET', h, 'last_change')) end

local function move_check(src, dst, failed, srcid, dstid)
  if not exists(src) then return end
  local rev = num(redis.call('HGET', src, 'revision'))
  local merged, keep_src = exists(dst), true
  if merged then
    rev = math.max(rev, num(redis.call('HGET', dst, 'revision'))) + 1
    keep_src = updated(src) > updated(dst)
  elseif rev == 0 then
    rev = 1 -- an executive that read DST as absent expects revision "0"
  end
  local score = redis.call('ZSCORE', failed, srcid)
  redis.call('ZREM', failed, srcid)
  if keep_src then
    redis.call('RENAME', src, dst)
    redis.call('ZREM', failed, dstid)
    if score then redis.call('ZADD', failed, score, dstid) end
  else
    redis.call('DEL', src)
  end
  redis.call('HSET', dst, 'revision', rev)
end

local function move_member(k, src, dst)
  local s = redis.call('ZSCORE', k, src)
  if not s then return end
  redis.call('ZREM', k, src)
  local d = redis.call('ZSCORE', k, dst)
  if not d or tonumber(s) > tonumber(d) then redis.call('ZADD', k, s, dst) end
end

local done, i = 0, 1
while i <= #ARGV do
  local op = ARGV[i]
  local a = ARGV
  if not width[op] then return redis.error_reply('rename_entity: unknown op ' .. tostring(op)) end
  if op == 'key' then
    local kind, src, dst = a[i + 1], a[i + 2], a[i + 3]
    if exists(src) then
      if exists(dst) then
        local err = merge_key(kind, src, dst)
        if err then return err end
      else
        redis.call('RENAME', src, dst)
      end
    end
  elseif op == 'check' then
    move_check(a[i + 1], a[i + 2], a[i + 3], a[i + 4], a[i + 5])
  elseif op == 'zmember' then
    move_member(a[i + 1], a[i + 2], a[i + 3])
  elseif op == 'smember' then
    if redis.call('SREM', a[i + 1], a[i + 2]) == 1 then redis.call('SADD', a[i + 1], a[i + 3]) end
  elseif op == 'ack' then
    local byid, byhash, srcid, dstid, srchash, dsthash = a[i + 1], a[i + 2], a[i + 3], a[i + 4], a[i + 5], a[i + 6]
    if redis.call('HEXISTS', byid, srcid) == 1 or redis.call('HGET', byhash, srchash) == srcid then
      redis.call('HDEL', byid, srcid)
      redis.call('HDEL', byhash, srchash)
      redis.call('HSET', byid, dstid, dsthash)
      redis.call('HSET', byhash, dsthash, dstid)
    end
  end
  done = done + 1
  i = i + 1 + width[op]
end
return done
