import { INT, NOW } from "./lua-helpers.js";
import { type Script, script } from "./lua-script.js";

// ---- idempotency: a hash per key { state = lock | done, fp, token, owner, value }, or { abandoned } ----

/**
 * begin(fingerprint, leaseMs, owner, mode, doubtMs) → {'completed', fp, value} | {'in_progress', fp,
 * remainingMs} | {'in_doubt', fp} | {'acquired', token} | {'abandoned'}. A lock's key expires with
 * its lease (a killed holder never blocks the key beyond it), unless `doubtMs` > 0 (the `replicas`
 * option): then the lock is kept `doubtMs` past its lease, as `doubt`, and a begin after the lease
 * answers 'in_doubt' (the write may have taken effect: its result never came); a token is greater than any earlier one of the key: the server's
 * microseconds, or the last token + 1. `owner` is unique per begin (made by the caller, so that a
 * caller that got no reply can release what its begin took): a begin whose owner was already
 * released arrived after its caller gave up and takes nothing ('abandoned').
 *
 * The same script releases an owner (arguments from {@link releaseOwnerArgs}; → 1: the lock of
 * `owner` dropped, 0: none, a completed record or another owner's lock left as it is). One script,
 * so that the release is cached on the server whenever the begin it undoes could run there: a late
 * EVALSHA of the begin runs only where the script is cached, and then the release, sent right
 * after it, runs too (a second script would get NOSCRIPT, its EVAL fallback cut off by the
 * timeout). When the key does not exist, the begin of `owner` may not have arrived yet (a
 * reconnect reordered it): the key then keeps `owner` as abandoned for the lease left, so that
 * begin takes nothing when it comes; any other begin replaces that record as if the key were absent.
 */
export const BEGIN: Script = script(`${NOW}${INT}
if ARGV[4] == 'release' then
  local held = redis.call('HMGET', KEYS[1], 'state', 'owner')
  if held[1] == 'lock' and held[2] == ARGV[3] then
    redis.call('DEL', KEYS[1])
    return 1
  end
  if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('HSET', KEYS[1], 'abandoned', ARGV[3])
    redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  end
  return 0
end
local rec = redis.call('HMGET', KEYS[1], 'state', 'fp', 'value', 'until', 'token', 'abandoned', 'doubt')
if rec[1] == 'done' then return {'completed', rec[2], rec[3]} end
if rec[1] == 'lock' then
  local left = tonumber(rec[4]) - now
  if left > 0 then return {'in_progress', rec[2], left} end
  if rec[7] then return {'in_doubt', rec[2]} end
end
if rec[6] == ARGV[3] then return {'abandoned'} end
local token = now_us
local last = tonumber(rec[5] or '0')
if token <= last then token = last + 1 end
local lease = tonumber(ARGV[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'lock', 'fp', ARGV[1], 'until', int(now + lease), 'token', int(token), 'owner', ARGV[3])
local doubt = tonumber(ARGV[5] or '0')
if doubt > 0 then redis.call('HSET', KEYS[1], 'doubt', int(doubt)) end
redis.call('PEXPIRE', KEYS[1], lease + doubt)
return {'acquired', int(token)}
`);

/** The arguments of {@link BEGIN} that take a lock for `owner`. */
export function beginArgs(fingerprint: string, leaseMs: number, owner: string, doubtMs = 0): (string | number)[] {
  return [fingerprint, leaseMs, owner, "begin", doubtMs];
}

/** The arguments of {@link BEGIN} that release `owner`'s lock (an abandoned mark kept for `leaseMs` when there is none). */
export function releaseOwnerArgs(owner: string, leaseMs: number): (string | number)[] {
  return ["", leaseMs, owner, "release"];
}

/** Reads the key's `rec` (state, token, until, doubt) with the server's `now`, for {@link LOCK_HELD}. */
export const READ_LOCK = `${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'token', 'until', 'doubt')
`;

/**
 * Whether `rec` is a lock still held: within its lease, or kept in doubt past it (a lock in doubt
 * is still its holder's, nobody else can take it: its late result is stored, its failure releases it).
 */
export const LOCK_HELD = `(rec[1] == 'lock' and (tonumber(rec[3]) > now or rec[4]))`;

/** Stores ARGV[2] as the key's result, kept ARGV[3] ms, and returns 1. */
export const STORE_RESULT = `redis.call('HSET', KEYS[1], 'state', 'done', 'value', ARGV[2])
redis.call('HDEL', KEYS[1], 'until', 'doubt')
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
`;

/** The lock of ARGV[1], held (see {@link LOCK_HELD}): goes on, else returns 0. */
const HELD = `${READ_LOCK}if rec[2] ~= ARGV[1] or not ${LOCK_HELD} then return 0 end
`;

/** complete(token, value, ttlMs) → 1 (stored), 0 (the token no longer holds the key: nothing stored). */
export const COMPLETE: Script = script(`${HELD}${STORE_RESULT}`);

/** release(token) → 1 (dropped), 0 (not held by the token). */
export const RELEASE: Script = script(`${HELD}
redis.call('DEL', KEYS[1])
return 1
`);

/** extend(token, leaseMs) → 1 (renewed), 0 (not held by the token). */
export const EXTEND: Script = script(`${HELD}${INT}
local lease = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'until', int(now + lease))
redis.call('PEXPIRE', KEYS[1], lease + tonumber(rec[4] or '0'))
return 1
`);
