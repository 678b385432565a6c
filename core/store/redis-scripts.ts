// Lua run atomically on the Redis server: each script is one check-and-update, so replicas never race.
// Time comes from the server (TIME), so replicas with skewed clocks still agree. Numbers cross the boundary as
// strings: Lua numbers are doubles and Redis would truncate them to integers.

/**
 * Each rate window is three keys: its tat `rl:<key>`, the limit that tat was written under `rl-limit:<key>` (absent:
 * the same limit) and when it was written `rl-at:<key>` (server time), all set together with the same expiry. The
 * tat and limit keys hold plain numbers, as the releases before this one write and read them (they tonumber() both;
 * anything else fails their scripts), so replicas of those releases share the windows during a rolling upgrade or a
 * rollback; the write time is in a key they never read. One of them charging a window leaves its write time as it
 * was, earlier than the tat's (after a step back that counts more as owed, never less), or lets it expire first
 * (then the window is read as that release reads it).
 *
 * A window's tat at a limit (mirror of gcra.ts readWindow): the units owed past now under the limit it was written
 * with are owed again at the new limit's interval, and stored so (all three keys, expiring with the new debt),
 * whether the caller charges, is refused or only reads: left in the old limit's units the debt would drain at the old
 * pace. Written later than now, the server's clock stepped back since, and what the window owed then is owed from
 * now (stored so), not from a time that has not come yet. Defines `local function rescaled(tk, lk, ak, limit, now)`
 * and `local function written(tk, lk, ak, tat, limit, now)` (limit as the caller got it, a string).
 */
const RESCALED = `
local function written(tk, lk, ak, tat, limit, now)
  local px = math.ceil(tat - now) + 1000
  redis.call('SET', tk, string.format('%.6f', tat), 'PX', px)
  redis.call('SET', lk, limit, 'PX', px)
  redis.call('SET', ak, string.format('%.6f', now), 'PX', px)
end
local function rescaled(tk, lk, ak, limit, now)
  local tat = tonumber(redis.call('GET', tk) or '0')
  local at = tonumber(redis.call('GET', ak) or '0') or 0
  local stepped = at > now
  if stepped then tat = now + (tat - at) end
  if tat <= now then
    if stepped then redis.call('DEL', tk, lk, ak) end
    return now
  end
  local was = tonumber(redis.call('GET', lk) or '0') or 0
  local rescale = was > 0 and was ~= limit
  if rescale then tat = now + (tat - now) * was / limit end
  if rescale or stepped then written(tk, lk, ak, tat, string.format('%.17g', limit), now) end
  return tat
end
`;

/**
 * GCRA over several windows, all or nothing (mirror of gcra.ts). KEYS = windows, then each window's limit key, then
 * each window's write-time key (RESCALED); ARGV = limit1, cost1, limit2, cost2, ...
 * Returns { ok, retry, now, then each window's tat, then per window 1 when it lacked room }.
 */
export const RATE_LIMIT = `${RESCALED}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local W = 60000
local ok = 1
local retry = 0
local n = #KEYS / 3
local tats, news, costs, refused = {}, {}, {}, {}
for i = 1, n do
  local limit = tonumber(ARGV[2 * i - 1])
  local cost = tonumber(ARGV[2 * i])
  if cost > limit then cost = limit end
  local tat = rescaled(KEYS[i], KEYS[n + i], KEYS[2 * n + i], limit, now)
  local nt = tat + cost * (W / limit)
  tats[i] = tat
  news[i] = nt
  costs[i] = cost
  refused[i] = 0
  -- Nothing to charge (count_tokens against a token window) always fits, a window in debt included.
  if cost > 0 and nt - now > W + 1e-6 then
    ok = 0
    refused[i] = 1
    if nt - W - now > retry then retry = nt - W - now end
  end
end
local out = { ok, string.format('%.6f', retry), string.format('%.6f', now) }
for i = 1, n do
  local used = tats[i]
  if ok == 1 then
    used = news[i]
    if costs[i] > 0 then written(KEYS[i], KEYS[n + i], KEYS[2 * n + i], used, ARGV[2 * i - 1], now) end
  end
  out[#out + 1] = string.format('%.6f', used)
end
for i = 1, n do out[#out + 1] = refused[i] end
return out
`;

/** KEYS[1] window, KEYS[2] its limit key, KEYS[3] its write-time key; ARGV = limit, delta (units; negative gives back). */
export const RATE_ADJUST = `${RESCALED}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local limit = tonumber(ARGV[1])
local nt = rescaled(KEYS[1], KEYS[2], KEYS[3], limit, now) + tonumber(ARGV[2]) * (60000 / limit)
if nt > now then
  written(KEYS[1], KEYS[2], KEYS[3], nt, ARGV[1], now)
else
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
end
return 1
`;

/**
 * Budget holds, in the layout every release since budgets shares (replicas of two releases may run on one Redis):
 * `resv:<scope>:<periodKey>` (id -> "amount:expiresAt"), the hash of the period the budget had when the request was
 * admitted; a hold is settled, released and renewed there. HELD sums the unexpired holds of KEYS[from..], the scope's
 * hashes for the day, week, month and total containing the request: a hold lives in one of them, so one made under
 * another period than the budget has now (a reload changed it while the request ran) still counts. `sweep` drops
 * the expired ones.
 */
const HELD = `
local function held(from, now, sweep)
  local reserved = 0
  for k = from, #KEYS do
    local all = redis.call('HGETALL', KEYS[k])
    for i = 1, #all, 2 do
      local amount, expires = string.match(all[i + 1], '^(%d+):(%d+)$')
      if tonumber(expires) > now then reserved = reserved + tonumber(amount)
      elseif sweep then redis.call('HDEL', KEYS[k], all[i]) end
    end
  end
  return reserved
end
`;

/**
 * KEYS[1] spend counter, KEYS[2] the hash of the admission's period (where the hold goes), KEYS[3..] the scope's
 * other hashes a hold may count from (HELD); ARGV = id, amount, limit, leaseMs.
 */
export const RESERVE = HELD + `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local reserved = held(2, now, true)
local amount = tonumber(ARGV[2])
if spent + reserved + amount > tonumber(ARGV[3]) then
  return { 0, string.format('%.0f', spent), string.format('%.0f', reserved) }
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. string.format('%.0f', now + tonumber(ARGV[4])))
-- Only ever lengthened: a short lease must not cut the key from under a longer one held in it (a video job's).
local ttl = tonumber(ARGV[4]) + 60000
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
return { 1, string.format('%.0f', spent), string.format('%.0f', reserved + amount) }
`;

/**
 * Adds one ledger record (decoded JSON) to its hourly and daily rollup hashes: one field per group and counter
 * ("project␟key␟model␟provider␟endpoint␟sandbox␞counter"); zero counters are skipped. The sorted sets roll:hours and
 * roll:days list the buckets that exist.
 */
const ROLL = `
local function roll(prefix, e)
  local g = table.concat({ e.project, e.keyId, e.model, e.provider, e.endpoint, e.sandbox and '1' or '0' }, '\\31') .. '\\30'
  local err = 0
  if e.status >= 400 or e.outcome ~= 'ok' then err = 1 end
  local ints = { requests = 1, errors = err, inputTokens = e.inputTokens, outputTokens = e.outputTokens, cacheReadTokens = e.cacheReadTokens,
    cacheWriteTokens = e.cacheWriteTokens, reasoningTokens = e.reasoningTokens, images = e.images, searchUnits = e.searchUnits,
    webSearches = e.webSearches }
  local hour = string.format('%.0f', math.floor(e.ts / 3600000) * 3600000)
  local day = string.format('%.0f', math.floor(e.ts / 86400000) * 86400000)
  local hashes = { prefix .. 'roll:h:' .. hour, prefix .. 'roll:d:' .. day }
  -- Which buckets exist, so a question over years reads only the hours and days that have records.
  redis.call('ZADD', prefix .. 'roll:hours', hour, hour)
  redis.call('ZADD', prefix .. 'roll:days', day, day)
  for _, h in ipairs(hashes) do
    for name, v in pairs(ints) do
      if type(v) == 'number' and v ~= 0 then redis.call('HINCRBY', h, g .. name, string.format('%.0f', v)) end
    end
    if type(e.videoSeconds) == 'number' and e.videoSeconds ~= 0 then redis.call('HINCRBYFLOAT', h, g .. 'videoSeconds', string.format('%.17g', e.videoSeconds)) end
    if e.costPico ~= '0' then redis.call('HINCRBY', h, g .. 'costPico', e.costPico) end
  end
end
`;

/**
 * The ledger in Redis. KEYS[1] ledger stream, KEYS[2] once-marker for the generation id (holds the record's stream
 * id), KEYS[3..6] the project's spend counters (day, week, month, total), KEYS[7..10] the key's (store/key-budget.ts),
 * KEYS[11] rollup pointer (every stream entry up to it is in the rollups), KEYS[12] reservations hash or absent.
 * ARGV = entry JSON, cost in pico-USD, reservation id, key prefix, then the rollup increments (see below; redis.ts
 * rollupArgs, the same sums as ROLL).
 * The entry is marked r=1 (counted in the rollups); the pointer follows the stream while no older writer (a gateway
 * from before rollups) has added entries it did not count — BACKFILL catches up on those.
 */
export const RECORD = `
if #KEYS >= 12 and ARGV[3] ~= '' then redis.call('HDEL', KEYS[12], ARGV[3]) end
if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', 2678400) then return 0 end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local lastId = '0-0'
if #last > 0 then lastId = last[1][1] end
local ptr = redis.call('GET', KEYS[11]) or '0-0'
local id = redis.call('XADD', KEYS[1], '*', 'e', ARGV[1], 'r', '1')
redis.call('SET', KEYS[2], id, 'EX', 2678400)
-- The rollups (what ROLL computes from the entry, computed by the caller): ARGV[5] group prefix, ARGV[6] hour,
-- ARGV[7] day, then counter, value pairs (videoSeconds a float).
local hashes = { ARGV[4] .. 'roll:h:' .. ARGV[6], ARGV[4] .. 'roll:d:' .. ARGV[7] }
redis.call('ZADD', ARGV[4] .. 'roll:hours', ARGV[6], ARGV[6])
redis.call('ZADD', ARGV[4] .. 'roll:days', ARGV[7], ARGV[7])
for _, h in ipairs(hashes) do
  for i = 8, #ARGV, 2 do
    if ARGV[i] == 'videoSeconds' then redis.call('HINCRBYFLOAT', h, ARGV[5] .. ARGV[i], ARGV[i + 1])
    else redis.call('HINCRBY', h, ARGV[5] .. ARGV[i], ARGV[i + 1]) end
  end
end
if ptr == lastId then redis.call('SET', KEYS[11], id) end
for i = 3, 10 do
  redis.call('INCRBY', KEYS[i], ARGV[2])
  if i ~= 6 and i ~= 10 then redis.call('EXPIRE', KEYS[i], 34560000) end
end
return 1
`;

/**
 * KEYS = windows, then each window's limit key, then each window's write-time key (RESCALED); ARGV = each window's
 * limit. Server time, then each window's tat at that limit (rescaled; now when empty): the windows' state without
 * charging (a window written under another limit, or before the clock stepped back, is stored as a charge would).
 */
export const RATE_STATE = `${RESCALED}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local n = #KEYS / 3
local out = { string.format('%.6f', now) }
for i = 1, n do out[#out + 1] = string.format('%.6f', rescaled(KEYS[i], KEYS[n + i], KEYS[2 * n + i], tonumber(ARGV[i]), now)) end
return out
`;

/**
 * Lease reservations still held for longer. KEYS = their reservations hashes (one per hold, repeats allowed);
 * ARGV = id, leaseMs per hold. A hold settled, released or expired is not brought back; a lease is never shortened.
 */
export const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, #KEYS do
  local id, lease = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local v = redis.call('HGET', KEYS[i], id)
  if v then
    local amount, expires = string.match(v, '^(%d+):(%d+)$')
    if amount and tonumber(expires) > now and tonumber(expires) < now + lease then
      redis.call('HSET', KEYS[i], id, amount .. ':' .. string.format('%.0f', now + lease))
      if redis.call('PTTL', KEYS[i]) < lease + 60000 then redis.call('PEXPIRE', KEYS[i], lease + 60000) end
    end
  end
end
return 1
`;

/** KEYS = the scope's hashes a hold may count from (HELD). What unexpired reservations hold now (server time), in pico-USD. */
export const RESERVED = HELD + `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return string.format('%.0f', held(1, now, false))
`;

/**
 * The ledger elsewhere (store.ledger: postgres): spend and settlement only, once per generation id. KEYS[1]
 * once-marker, KEYS[2..5] the project's spend counters, KEYS[6..9] the key's, KEYS[10] reservations hash or absent.
 * ARGV = cost in pico-USD, reservation id.
 */
export const RECORD_SPEND = `
if #KEYS >= 10 and ARGV[2] ~= '' then redis.call('HDEL', KEYS[10], ARGV[2]) end
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', 2678400) then return 0 end
for i = 2, 9 do
  redis.call('INCRBY', KEYS[i], ARGV[1])
  if i ~= 5 and i ~= 9 then redis.call('EXPIRE', KEYS[i], 34560000) end
end
return 1
`;

/**
 * Rollups of stream entries written without them (by a gateway from before rollups), up to ARGV[2] entries after the
 * pointer, exactly once: the pointer moves past what was counted in the same script. KEYS[1] stream, KEYS[2] pointer;
 * ARGV = key prefix, count. Returns { entries read, 1 when more may follow }.
 */
export const BACKFILL = ROLL + `
local ptr = redis.call('GET', KEYS[2]) or '0-0'
local n = tonumber(ARGV[2])
local batch = redis.call('XRANGE', KEYS[1], ptr, '+', 'COUNT', n + 1)
local read = 0
for _, item in ipairs(batch) do
  if item[1] ~= ptr then
    local f = item[2]
    local counted = false
    local json
    for i = 1, #f, 2 do
      if f[i] == 'r' then counted = true end
      if f[i] == 'e' then json = f[i + 1] end
    end
    if not counted and json then roll(ARGV[1], cjson.decode(json)) end
    ptr = item[1]
    read = read + 1
  end
end
if read > 0 then redis.call('SET', KEYS[2], ptr) end
if #batch > n then return { read, 1 } end
return { read, 0 }
`;

/** KEYS[1] stream, KEYS[2] rollup pointer: is every entry counted? 1 when the pointer is the stream's last entry. */
export const ROLLUPS_CURRENT = `
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local lastId = '0-0'
if #last > 0 then lastId = last[1][1] end
if (redis.call('GET', KEYS[2]) or '0-0') == lastId then return 1 end
return 0
`;

/**
 * After Redis lost its state, with the ledger elsewhere: who rebuilds spend. KEYS[1] epoch, KEYS[2] the epoch whose
 * spend counters are current, KEYS[3] rebuild lock, KEYS[4] the set of epochs a rebuild of these counters replaced;
 * ARGV = a new epoch, owner, lock ms, the epoch the caller last saw ('' when none). Returns { epoch, state }:
 * "rebuild" (the caller holds the lock and must rebuild), "ready", "busy" (someone rebuilds), "unmarked".
 * Marked counters are ready only for a caller that saw this epoch, or whose epoch a rebuild replaced: to one that saw
 * another epoch they may be a restored backup (an older data set, missing the spend since), so they are rebuilt.
 */
export const EPOCH_CLAIM = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
  return { ARGV[1], 'rebuild' }
end
local e = redis.call('GET', KEYS[1])
local marked = redis.call('GET', KEYS[2]) == e
local known = ARGV[4]
if marked and (known == '' or known == e or redis.call('SISMEMBER', KEYS[4], known) == 1) then return { e, 'ready' } end
if redis.call('EXISTS', KEYS[3]) == 1 then return { e, 'busy' } end
if marked then
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
  return { e, 'rebuild' }
end
return { e, 'unmarked' }
`;

/**
 * KEYS[1] record; ARGV = hash, owner, leaseMs[, renewEveryMs]. A claim taken with renewEveryMs keeps it and its lease
 * (e, l): a waiter is told how long since it was taken or renewed (its lease less its PTTL) and that period.
 */
export const IDEM_BEGIN = `
local v = redis.call('GET', KEYS[1])
if not v then
  local c = { s = 'p', h = ARGV[1], o = ARGV[2] }
  if ARGV[4] then c.l = tonumber(ARGV[3]) c.e = tonumber(ARGV[4]) end
  redis.call('SET', KEYS[1], cjson.encode(c), 'PX', ARGV[3])
  return { 'new' }
end
local r = cjson.decode(v)
if r.h ~= ARGV[1] then return { 'mismatch' } end
if r.s == 'p' then
  if r.l and r.e then return { 'pending', r.l - redis.call('PTTL', KEYS[1]), r.e } end
  return { 'pending' }
end
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

/**
 * Lease idempotency claims still running for longer. KEYS = their records (repeats allowed); ARGV = owner, leaseMs per
 * claim. Only a claim the same owner still holds is renewed (as IDEM_COMPLETE checks); a finished record, a released
 * or expired claim, or one another request took over is left alone; a lease is never shortened.
 */
export const IDEM_RENEW = `
for i = 1, #KEYS do
  local owner, lease = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local v = redis.call('GET', KEYS[i])
  if v then
    local r = cjson.decode(v)
    local ttl = redis.call('PTTL', KEYS[i])
    if r.s == 'p' and r.o == owner and ttl >= 0 and ttl < lease then redis.call('PEXPIRE', KEYS[i], lease) end
  end
end
return 1
`;

/** KEYS[1] probe key, KEYS[2] epoch; ARGV = now. A write (a read-only replica fails it), then the epoch. */
export const PROBE = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', 60000)
return redis.call('GET', KEYS[2])
`;

/**
 * A stored Responses record and its output items, written only while the id is free or already the caller's project's
 * and kind of key's (responses-types.ts ownsId): the owner check and the write in one step, so two projects storing
 * one id at once on two replicas never both succeed. KEYS[1] record, KEYS[2..] the output items' keys; ARGV = the
 * record's opening `{"id":<id>,"project":<project>,` (a sandbox key's record goes on `"sandbox":true,`: how this
 * release writes it), the same up to `"project":`, the project, ttl ms, the record JSON, 1 for a sandbox key's record
 * (else 0), then one JSON per item key. A live record's opening also opens its project's sandbox records, so what
 * follows it tells them apart. The owner is read from the record's opening, so a large conversation is never decoded
 * here; a record laid out otherwise (none are, the previous release writes id and project first too) is decoded, and
 * without `sandbox` it is a live key's. Returns 1 when written, 0 when another project or kind of key holds the id.
 */
export const RESPONSE_PUT = `
local v = redis.call('GET', KEYS[1])
if v then
  local sandbox = ARGV[6] == '1'
  if string.sub(v, 1, #ARGV[1]) == ARGV[1] then
    if not sandbox and string.sub(v, #ARGV[1] + 1, #ARGV[1] + 15) == '"sandbox":true,' then return 0 end
  elseif string.sub(v, 1, #ARGV[2]) == ARGV[2] then return 0
  else
    local old = cjson.decode(v)
    if old.project ~= ARGV[3] or (old.sandbox == true) ~= sandbox then return 0 end
  end
end
redis.call('SET', KEYS[1], ARGV[5], 'PX', ARGV[4])
for i = 2, #KEYS do redis.call('SET', KEYS[i], ARGV[i + 5], 'PX', ARGV[4]) end
return 1
`;
