import { INT, NOW } from "./lua-helpers.js";
import { type Script, script } from "./lua-script.js";

// ---- circuit breaker: a hash per key { state = closed | open | half | isolated, failures, opened, openMs, probe, probeAt, gen, owner, abandoned } ----
// KEYS[1] is named by a hash of the breaker key (a tool name); ARGV[2] is the breaker key itself,
// used only in what is published (never stored), so that replicas map a change back to their tool.
// State changes, and the first failure of a row (s = 'failing'), are published on ARGV[1] (the
// channel) as JSON { k, s, r, f, v }: key, state,
// remaining ms (open), failures, version. Replies: { what happened, state, remaining ms, failures,
// open ms, version }. The version is the server's microseconds when the script ran: scripts run one
// at a time, so a later state has a greater version, and a process that gets a reply after a newer
// publish (they come on two connections) keeps the newer state.

/** Keeps a key's record no longer than a day past its last change (an open circuit: its open time at least). */
const BREAKER_HELPERS = `${NOW}${INT}
local key = ARGV[2]
local h = redis.call('HMGET', KEYS[1], 'state', 'failures', 'opened', 'openMs', 'probe', 'probeAt', 'gen')
local state = h[1] or 'closed'
local failures = tonumber(h[2] or '0')
local opened = tonumber(h[3] or '0')
local open_ms = tonumber(h[4] or '0')
local probe = tonumber(h[5] or '0')
local probe_at = tonumber(h[6] or '0')
local gen = tonumber(h[7] or '0')
local function publish(s, remaining, f)
  redis.call('PUBLISH', ARGV[1], cjson.encode({k = key, s = s, r = remaining, f = f, v = int(now_us)}))
end
local function keep(ms)
  redis.call('PEXPIRE', KEYS[1], math.max(ms, 86400000))
end
local function remaining(reset_ms)
  if state == 'open' then return math.max(0, opened + open_ms - now) end
  if state == 'half' and probe ~= 0 and now - probe_at < reset_ms then return probe_at + reset_ms - now end
  if state == 'isolated' then return -1 end
  return 0
end
local function next_gen()
  local g = now_us
  if g <= gen then g = gen + 1 end
  return g
end
`;

/**
 * Owners kept as abandoned per circuit at most: beyond it (a burst of timeouts of one tool within a
 * probe's lease), an acquire that reaches Redis after its own release may still take the probe,
 * held then until its lease ends, as before owner ids.
 */
export const MAX_MARKS = 100;

/**
 * acquire(channel, key, resetMs, owner) → {'closed'} | {'isolated'} | {'open', remaining} | {'half', remaining}
 * | {'probe', generation, movedFromOpen (1|0), failures, openMs} | {'abandoned'}: exactly one caller
 * fleet-wide gets the probe. `owner` is unique per acquire (made by the caller, so that a caller
 * that got no reply can release the probe its acquire may have taken): an acquire whose owner was
 * already released arrived after its caller gave up and takes nothing ('abandoned').
 *
 * The same script releases an owner (arguments from {@link acquireReleaseArgs}; → 1: the probe of
 * `owner` freed and published as open with 0 left, so that replicas told 'half' meanwhile ask again;
 * 0: none, another owner's probe left as it is). One script, so that the release is cached on the
 * server whenever the acquire it undoes could run there (see BEGIN in idempotency-scripts.ts). When
 * the circuit holds no probe of `owner`, its acquire may not have arrived yet (a reconnect
 * reordered it): the record then keeps `owner` as abandoned for the lease left (a JSON map of
 * owner → until, the expired marks dropped at each write; at most {@link MAX_MARKS}).
 */
export const ACQUIRE: Script = script(`${BREAKER_HELPERS}
local reset_ms = tonumber(ARGV[3])
local owner = ARGV[4]
local function abandoned()
  local raw = redis.call('HGET', KEYS[1], 'abandoned')
  local marks, count = {}, 0
  if raw then
    for who, till in pairs(cjson.decode(raw)) do
      if tonumber(till) > now then
        marks[who] = till
        count = count + 1
      end
    end
  end
  return marks, count
end
local function keep_marks(marks)
  if next(marks) == nil then redis.call('HDEL', KEYS[1], 'abandoned')
  else redis.call('HSET', KEYS[1], 'abandoned', cjson.encode(marks)) end
end
if ARGV[5] == 'release' then
  if state == 'half' and probe ~= 0 and redis.call('HGET', KEYS[1], 'owner') == owner then
    redis.call('HSET', KEYS[1], 'probe', 0)
    publish('open', 0, failures)
    return 1
  end
  -- Only an open or half-open circuit gives a probe: elsewhere a late acquire takes nothing anyway.
  -- A burst of timed-out acquires marks many owners (each release tried several times while
  -- Redis was silent): a mark is written once, and at most MAX_MARKS are kept per circuit.
  if state == 'open' or state == 'half' then
    local marks, count = abandoned()
    if marks[owner] == nil and count < ${MAX_MARKS} then
      marks[owner] = int(now + reset_ms)
      keep_marks(marks)
    end
  end
  return 0
end
if state == 'closed' then return {'closed', 'closed', 0, failures, 0, int(now_us)} end
if state == 'isolated' then return {'isolated', 'isolated', -1, failures, 0, int(now_us)} end
local moved = 0
if state == 'open' then
  local left = opened + open_ms - now
  if left > 0 then return {'open', 'open', left, failures, open_ms, int(now_us)} end
  moved = 1
elseif probe ~= 0 and now - probe_at < reset_ms then
  return {'half', 'half', probe_at + reset_ms - now, failures, open_ms, int(now_us)}
end
local marks = abandoned()
if marks[owner] then
  marks[owner] = nil
  keep_marks(marks)
  return {'abandoned', state, 0, failures, open_ms, int(now_us)}
end
local g = next_gen()
redis.call('HSET', KEYS[1], 'state', 'half', 'probe', int(g), 'probeAt', int(now), 'gen', int(g), 'owner', owner)
keep(open_ms * 2)
return {'probe', int(g), moved, failures, open_ms, int(now_us)}
`);

/** The arguments of {@link ACQUIRE} that ask for the probe as `owner`. */
export function acquireArgs(channel: string, key: string, resetMs: number, owner: string): (string | number)[] {
  return [channel, key, resetMs, owner];
}

/** The arguments of {@link ACQUIRE} that release `owner`'s probe (an abandoned mark kept for `leaseMs` when it holds none). */
export function acquireReleaseArgs(channel: string, key: string, owner: string, leaseMs: number): (string | number)[] {
  return [channel, key, leaseMs, owner, "release"];
}

/**
 * record(channel, key, result s|f|n, probe, threshold, resetMs, maxResetMs (0: none), resetFirst 1|0)
 * → {'opened' | 'reopened' | 'closed' | 'counted' | 'reset' | 'freed' | 'none' | 'stale', state, remaining, failures, openMs}.
 * A closed permit's result on a circuit that is not closed, and a probe's result that is not the
 * live probe's (another generation, or its lease ran out), change nothing ('stale').
 */
export const RECORD: Script = script(`${BREAKER_HELPERS}
local result = ARGV[3]
local permit = tonumber(ARGV[4])
local threshold = tonumber(ARGV[5])
local reset_ms = tonumber(ARGV[6])
local max_reset_ms = tonumber(ARGV[7])
if permit == 0 then
  if state ~= 'closed' then return {'stale', state, remaining(reset_ms), failures, open_ms, int(now_us)} end
  if result == 's' then
    if failures > 0 then redis.call('DEL', KEYS[1]) end
    return {'reset', 'closed', 0, 0, 0, int(now_us)}
  end
  if result == 'n' then return {'none', 'closed', 0, failures, 0, int(now_us)} end
  if ARGV[8] == '1' then failures = 0 end
  failures = failures + 1
  if failures >= threshold then
    redis.call('HSET', KEYS[1], 'state', 'open', 'failures', failures, 'opened', int(now), 'openMs', reset_ms)
    keep(reset_ms * 2)
    publish('open', reset_ms, failures)
    return {'opened', 'open', reset_ms, failures, reset_ms, int(now_us)}
  end
  redis.call('HSET', KEYS[1], 'state', 'closed', 'failures', failures)
  keep(0)
  -- A row's first failure: every replica learns it, so that its next success ends the row at once.
  if failures == 1 then publish('failing', 0, failures) end
  return {'counted', 'closed', 0, failures, 0, int(now_us)}
end
if state ~= 'half' or probe ~= permit or now - probe_at >= reset_ms then
  return {'stale', state, remaining(reset_ms), failures, open_ms, int(now_us)}
end
if result == 's' then
  redis.call('DEL', KEYS[1])
  publish('closed', 0, failures)
  return {'closed', 'closed', 0, failures, open_ms, int(now_us)}
end
if result == 'n' then
  redis.call('HSET', KEYS[1], 'probe', 0)
  return {'freed', 'half', 0, failures, open_ms, int(now_us)}
end
local next_open = reset_ms
if max_reset_ms > 0 then next_open = math.min(math.max(open_ms, reset_ms) * 2, max_reset_ms) end
failures = failures + 1
redis.call('HSET', KEYS[1], 'state', 'open', 'failures', failures, 'opened', int(now), 'openMs', next_open, 'probe', 0)
keep(next_open * 2)
publish('open', next_open, failures)
return {'reopened', 'open', next_open, failures, next_open, int(now_us)}
`);

/** isolate(channel, key) → {the state it left, version}. Held open until reset (no expiry). */
export const ISOLATE: Script = script(`${BREAKER_HELPERS}
redis.call('HSET', KEYS[1], 'state', 'isolated', 'failures', failures)
redis.call('PERSIST', KEYS[1])
publish('isolated', -1, failures)
return {state, int(now_us)}
`);

/** reset(channel, key) → {the state it left, version}. */
export const RESET: Script = script(`${BREAKER_HELPERS}
redis.call('DEL', KEYS[1])
if state ~= 'closed' then publish('closed', 0, failures) end
return {state, int(now_us)}
`);

/**
 * read(resetMs of each key) → {version, then per key: state, remaining ms, failures}: what a
 * replica learns on first use of its tools and after every (re)subscribe, one script for many keys
 * (read only: nothing changes, nothing is published). A circuit without a record is closed with no
 * failures; `remaining` is -1 while isolated, 0 once an open time or a probe's lease is over.
 */
export const READ: Script = script(`${NOW}${INT}
local out = {int(now_us)}
for i, name in ipairs(KEYS) do
  local h = redis.call('HMGET', name, 'state', 'failures', 'opened', 'openMs', 'probe', 'probeAt')
  local state = h[1] or 'closed'
  local remaining = 0
  if state == 'open' then
    remaining = math.max(0, tonumber(h[3] or '0') + tonumber(h[4] or '0') - now)
  elseif state == 'half' and tonumber(h[5] or '0') ~= 0 then
    remaining = math.max(0, tonumber(h[6] or '0') + tonumber(ARGV[i]) - now)
  elseif state == 'isolated' then
    remaining = -1
  end
  out[#out + 1] = state
  out[#out + 1] = remaining
  out[#out + 1] = tonumber(h[2] or '0')
end
return out
`);

/**
 * budget(windowMs, ratio, floor, take, then [age, calls, retries] ...) → {taken (1|0), then per
 * live bucket: age, calls, retries}: a tool's retry budget fleet-wide (a hash per tool: `c<bucket>`
 * and `r<bucket>` counts, buckets of a tenth of the window on the server's clock). Adds the counts
 * sent (dated by age, so that a replica's clock never places them), drops the buckets that left
 * the window, and with `take` adds one retry to now's bucket when retries + 1 ≤ ratio × calls +
 * floor: one script, so two replicas never take the last retry both. Kept two windows past its
 * last share.
 */
export const BUDGET: Script = script(`${NOW}
local window_ms = tonumber(ARGV[1])
local ratio = tonumber(ARGV[2])
local floor_retries = tonumber(ARGV[3])
local take = ARGV[4] == '1'
local bucket = math.floor(now * 10 / window_ms)
local oldest = bucket - 9
for i = 5, #ARGV - 2, 3 do
  local at = bucket - tonumber(ARGV[i])
  local calls = tonumber(ARGV[i + 1])
  local retries = tonumber(ARGV[i + 2])
  if at >= oldest and at <= bucket then
    if calls ~= 0 then redis.call('HINCRBY', KEYS[1], 'c' .. at, calls) end
    if retries ~= 0 then redis.call('HINCRBY', KEYS[1], 'r' .. at, retries) end
  end
end
local all = redis.call('HGETALL', KEYS[1])
local counts, order, stale = {}, {}, {}
local calls, retries = 0, 0
local function entry(at)
  local c = counts[at]
  if c == nil then
    c = {0, 0}
    counts[at] = c
    order[#order + 1] = at
  end
  return c
end
for i = 1, #all, 2 do
  local field = all[i]
  local at = tonumber(string.sub(field, 2))
  local n = tonumber(all[i + 1])
  if at == nil or at < oldest or at > bucket then
    stale[#stale + 1] = field
  else
    local c = entry(at)
    if string.sub(field, 1, 1) == 'c' then
      c[1] = c[1] + n
      calls = calls + n
    else
      c[2] = c[2] + n
      retries = retries + n
    end
  end
end
if #stale > 0 then redis.call('HDEL', KEYS[1], unpack(stale)) end
local taken = 0
if take and retries + 1 <= ratio * calls + floor_retries then
  taken = 1
  redis.call('HINCRBY', KEYS[1], 'r' .. bucket, 1)
  local c = entry(bucket)
  c[2] = c[2] + 1
end
if #order > 0 then redis.call('PEXPIRE', KEYS[1], window_ms * 2) end
local out = {taken}
for _, at in ipairs(order) do
  out[#out + 1] = bucket - at
  out[#out + 1] = counts[at][1]
  out[#out + 1] = counts[at][2]
end
return out
`);
