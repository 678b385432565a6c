// The Redis rate-window scripts of the releases before this one, verbatim, for the rolling-upgrade tests: replicas of
// those releases share the windows on one Redis with this one's (redis-scripts.ts) during an upgrade or a rollback.

/**
 * The previous release's (f8f9a33^: the tat key, and beside it the limit it was written under as a plain number,
 * read with tonumber) RESCALED, as its RATE_LIMIT, RATE_STATE and RATE_ADJUST embed it.
 */
const PREVIOUS_RESCALED = `
local function rescaled(tk, lk, limit, now)
  local tat = tonumber(redis.call('GET', tk) or '0')
  if tat <= now then return now end
  local was = tonumber(redis.call('GET', lk) or '0')
  if was > 0 and was ~= limit then
    tat = now + (tat - now) * was / limit
    local px = math.ceil(tat - now) + 1000
    redis.call('SET', tk, string.format('%.6f', tat), 'PX', px)
    redis.call('SET', lk, string.format('%.17g', limit), 'PX', px)
  end
  return tat
end
`;

/** The previous release's RATE_LIMIT: KEYS = windows, then their limit keys; ARGV = limit, cost per window. */
export const PREVIOUS_RATE_LIMIT = `${PREVIOUS_RESCALED}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local W = 60000
local ok = 1
local retry = 0
local n = #KEYS / 2
local tats, news, costs, refused = {}, {}, {}, {}
for i = 1, n do
  local limit = tonumber(ARGV[2 * i - 1])
  local cost = tonumber(ARGV[2 * i])
  if cost > limit then cost = limit end
  local tat = rescaled(KEYS[i], KEYS[n + i], limit, now)
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
    if costs[i] > 0 then
      local px = math.ceil(used - now) + 1000
      redis.call('SET', KEYS[i], string.format('%.6f', used), 'PX', px)
      redis.call('SET', KEYS[n + i], ARGV[2 * i - 1], 'PX', px)
    end
  end
  out[#out + 1] = string.format('%.6f', used)
end
for i = 1, n do out[#out + 1] = refused[i] end
return out
`;

/** The previous release's RATE_STATE (GET /admin/v1/rate-limits): KEYS as RATE_LIMIT; ARGV = each window's limit. */
export const PREVIOUS_RATE_STATE = `${PREVIOUS_RESCALED}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local n = #KEYS / 2
local out = { string.format('%.6f', now) }
for i = 1, n do out[#out + 1] = string.format('%.6f', rescaled(KEYS[i], KEYS[n + i], tonumber(ARGV[i]), now)) end
return out
`;

/** The previous release's RATE_ADJUST: KEYS[1] window, KEYS[2] its limit key; ARGV = limit, delta. */
export const PREVIOUS_RATE_ADJUST = `${PREVIOUS_RESCALED}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local limit = tonumber(ARGV[1])
local nt = rescaled(KEYS[1], KEYS[2], limit, now) + tonumber(ARGV[2]) * (60000 / limit)
if nt > now then
  local px = math.ceil(nt - now) + 1000
  redis.call('SET', KEYS[1], string.format('%.6f', nt), 'PX', px)
  redis.call('SET', KEYS[2], ARGV[1], 'PX', px)
else
  redis.call('DEL', KEYS[1], KEYS[2])
end
return 1
`;

/** The release before that (c46488b^): a window's tat alone, no limit beside it. KEYS = windows; ARGV = limit, cost. */
export const OLDER_RATE_LIMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local W = 60000
local ok = 1
local retry = 0
local tats, news, costs, refused = {}, {}, {}, {}
for i = 1, #KEYS do
  local limit = tonumber(ARGV[2 * i - 1])
  local cost = tonumber(ARGV[2 * i])
  if cost > limit then cost = limit end
  local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
  if tat < now then tat = now end
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
for i = 1, #KEYS do
  local used = tats[i]
  if ok == 1 then
    used = news[i]
    if costs[i] > 0 then redis.call('SET', KEYS[i], string.format('%.6f', used), 'PX', math.ceil(used - now) + 1000) end
  end
  out[#out + 1] = string.format('%.6f', used)
end
for i = 1, #KEYS do out[#out + 1] = refused[i] end
return out
`;
