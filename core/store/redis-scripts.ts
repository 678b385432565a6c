// Lua run atomically on the Redis server: each script is one check-and-update, so replicas never race.
// Time comes from the server (TIME), so replicas with skewed clocks still agree. Numbers cross the boundary as
// strings: Lua numbers are doubles and Redis would truncate them to integers.

/** GCRA over several windows, all or nothing (mirror of gcra.ts). KEYS = windows; ARGV = limit1, cost1, limit2, cost2, ... */
export const RATE_LIMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local W = 60000
local ok = 1
local retry = 0
local tats, news = {}, {}
for i = 1, #KEYS do
  local limit = tonumber(ARGV[2 * i - 1])
  local cost = tonumber(ARGV[2 * i])
  if cost > limit then cost = limit end
  local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
  if tat < now then tat = now end
  local nt = tat + cost * (W / limit)
  tats[i] = tat
  news[i] = nt
  if nt - now > W + 1e-6 then
    ok = 0
    if nt - W - now > retry then retry = nt - W - now end
  end
end
local out = { ok, string.format('%.6f', retry), string.format('%.6f', now) }
for i = 1, #KEYS do
  local used = tats[i]
  if ok == 1 then
    used = news[i]
    redis.call('SET', KEYS[i], string.format('%.6f', used), 'PX', math.ceil(used - now) + 1000)
  end
  out[#out + 1] = string.format('%.6f', used)
end
return out
`;

/** KEYS[1] window; ARGV = limit, delta (units; negative gives back). */
export const RATE_ADJUST = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local nt = tat + tonumber(ARGV[2]) * (60000 / tonumber(ARGV[1]))
if nt > now then
  redis.call('SET', KEYS[1], string.format('%.6f', nt), 'PX', math.ceil(nt - now) + 1000)
else
  redis.call('DEL', KEYS[1])
end
return 1
`;

/** KEYS[1] spend counter, KEYS[2] reservations hash (id -> "amount:expiresAt"); ARGV = id, amount, limit, leaseMs. */
export const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local all = redis.call('HGETALL', KEYS[2])
local reserved = 0
for i = 1, #all, 2 do
  local amount, expires = string.match(all[i + 1], '^(%d+):(%d+)$')
  if tonumber(expires) <= now then redis.call('HDEL', KEYS[2], all[i]) else reserved = reserved + tonumber(amount) end
end
local amount = tonumber(ARGV[2])
if spent + reserved + amount > tonumber(ARGV[3]) then
  return { 0, string.format('%.0f', spent), string.format('%.0f', reserved) }
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. string.format('%.0f', now + tonumber(ARGV[4])))
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[4]) + 60000)
return { 1, string.format('%.0f', spent), string.format('%.0f', reserved + amount) }
`;

/**
 * KEYS[1] ledger stream, KEYS[2] once-marker for the generation id, KEYS[3..6] the project's spend counters (day,
 * week, month, total), KEYS[7..10] the key's (store/key-budget.ts), KEYS[11] reservations hash or absent.
 * ARGV = entry JSON, cost in pico-USD, reservation id.
 */
export const RECORD = `
if #KEYS >= 11 and ARGV[3] ~= '' then redis.call('HDEL', KEYS[11], ARGV[3]) end
if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', 2678400) then return 0 end
redis.call('XADD', KEYS[1], '*', 'e', ARGV[1])
for i = 3, 10 do
  redis.call('INCRBY', KEYS[i], ARGV[2])
  if i ~= 6 and i ~= 10 then redis.call('EXPIRE', KEYS[i], 34560000) end
end
return 1
`;

/** KEYS = windows. Server time, then each window's tat (0 when absent): the windows' state without charging. */
export const RATE_STATE = `
local t = redis.call('TIME')
local out = { string.format('%.6f', tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000) }
for i = 1, #KEYS do out[#out + 1] = redis.call('GET', KEYS[i]) or '0' end
return out
`;

/** KEYS[1] reservations hash. What unexpired reservations hold now (server time), in pico-USD. */
export const RESERVED = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local reserved = 0
for i = 1, #all, 2 do
  local amount, expires = string.match(all[i + 1], '^(%d+):(%d+)$')
  if tonumber(expires) > now then reserved = reserved + tonumber(amount) end
end
return string.format('%.0f', reserved)
`;

/** KEYS[1] record; ARGV = hash, owner, leaseMs. */
export const IDEM_BEGIN = `
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], cjson.encode({ s = 'p', h = ARGV[1], o = ARGV[2] }), 'PX', ARGV[3])
  return { 'new' }
end
local r = cjson.decode(v)
if r.h ~= ARGV[1] then return { 'mismatch' } end
if r.s == 'p' then return { 'pending' } end
return { 'done', r.r }
`;

/** KEYS[1] record; ARGV = hash, owner, response JSON, ttlMs. */
export const IDEM_COMPLETE = `
local v = redis.call('GET', KEYS[1])
if v then
  local r = cjson.decode(v)
  if r.s == 'p' and r.o ~= ARGV[2] then return 0 end
end
redis.call('SET', KEYS[1], cjson.encode({ s = 'd', h = ARGV[1], r = ARGV[3] }), 'PX', ARGV[4])
return 1
`;

/** KEYS[1] record; ARGV = owner. */
export const IDEM_RELEASE = `
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local r = cjson.decode(v)
if r.s == 'p' and r.o == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
`;

/** KEYS[1] probe key, KEYS[2] epoch; ARGV = now. A write (a read-only replica fails it), then the epoch. */
export const PROBE = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', 60000)
return redis.call('GET', KEYS[2])
`;
