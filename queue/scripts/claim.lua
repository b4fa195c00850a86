-- Claim up to N items from a queue into a consumer's processing list, atomically, so an item is
-- always in exactly one of the two lists.
-- KEYS[1] source queue (list)
-- KEYS[2] this instance's processing list
-- KEYS[3] optional sequence counter (string); "" when the queue has none
-- ARGV[1] max items to claim
-- ARGV[2] end of the source list consumers take from: "RIGHT" (LPUSH producers, the `events`
--         list) or "LEFT" (RPUSH producers: `notifications` and the media queues)
-- ARGV[3] items the caller already moved with BLMOVE just before; they are numbered first
-- Returns {first_sequence_number_or_0, processing_list_length, item1, item2, ...}, oldest item
-- first. The processing list keeps the newest claim at its head; its length after the claim tells
-- the caller whether the list holds this claim's items and nothing else.
local items = false
if tonumber(ARGV[1]) > 0 then
  if ARGV[2] == 'RIGHT' then
    items = redis.call('RPOP', KEYS[1], ARGV[1])
  else
    items = redis.call('LPOP', KEYS[1], ARGV[1])
  end
end
if not items then
  items = {}
end
-- in slices: unpack puts its values on the Lua stack, which holds about 8000 (batches reach 10000)
for at = 1, #items, 1000 do
  redis.call('LPUSH', KEYS[2], unpack(items, at, math.min(at + 999, #items)))
end
local numbered = #items + tonumber(ARGV[3])
local first = 0
if KEYS[3] ~= '' and numbered > 0 then
  first = redis.call('INCRBY', KEYS[3], numbered) - numbered + 1
end
local out = {first, redis.call('LLEN', KEYS[2])}
for i = 1, #items do
  out[i + 2] = items[i]
end
return out
