// What every script shares: the server's clock and integer formatting. One Lua script per
// operation, each touching one key (KEYS[1]; cluster-safe: the key carries a hash tag), judged by
// the Redis server's clock (`TIME`), never a client's: clients pass durations only. Replies are
// flat arrays of strings and integers.

/** Milliseconds and microseconds of the server clock. */
export const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
`;

/** A number as a decimal string without exponent (tokens and generations pass 10^15). */
export const INT = `local function int(n) return string.format('%.0f', n) end`;
