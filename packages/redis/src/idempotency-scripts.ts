import { INT, NOW } from "./lua-helpers.js";
import { type Script, script } from "./lua-script.js";

// ---- idempotency: a hash per key { state = lock | done, fp, token, value } ----

/**
 * begin(fingerprint, leaseMs) → {'completed', fp, value} | {'in_progress', fp, remainingMs} | {'acquired', token}.
 * A lock's key expires with its lease (a killed holder never blocks the key beyond it); a token is
 * greater than any earlier one of the key: the server's microseconds, or the last token + 1.
 */
export const BEGIN: Script = script(`${NOW}${INT}
local rec = redis.call('HMGET', KEYS[1], 'state', 'fp', 'value', 'until', 'token')
if rec[1] == 'done' then return {'completed', rec[2], rec[3]} end
if rec[1] == 'lock' then
  local left = tonumber(rec[4]) - now
  if left > 0 then return {'in_progress', rec[2], left} end
end
local token = now_us
local last = tonumber(rec[5] or '0')
if token <= last then token = last + 1 end
local lease = tonumber(ARGV[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'lock', 'fp', ARGV[1], 'until', int(now + lease), 'token', int(token))
redis.call('PEXPIRE', KEYS[1], lease)
return {'acquired', int(token)}
`);

/** The lock of ARGV[1], live: 1, else 0. */
const HELD = `${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'token', 'until')
if rec[1] ~= 'lock' or rec[2] ~= ARGV[1] or tonumber(rec[3]) <= now then return 0 end
`;

/** complete(token, value, ttlMs) → 1 (stored), 0 (the token no longer holds the key: nothing stored). */
export const COMPLETE: Script = script(`${HELD}
redis.call('HSET', KEYS[1], 'state', 'done', 'value', ARGV[2])
redis.call('HDEL', KEYS[1], 'until')
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
`);

/** release(token) → 1 (dropped), 0 (not held by the token). */
export const RELEASE: Script = script(`${HELD}
redis.call('DEL', KEYS[1])
return 1
`);

/** extend(token, leaseMs) → 1 (renewed), 0 (not held by the token). */
export const EXTEND: Script = script(`${HELD}${INT}
local lease = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'until', int(now + lease))
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`);
