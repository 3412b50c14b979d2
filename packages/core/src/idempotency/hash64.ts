/** cyrb53's two 32-bit states over `text`, mixed, as 8 + 8 hex characters (not cryptographic). */
export function hash64(text: string): string {
  let state1 = 0xdeadbeef;
  let state2 = 0x41c6ce57;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    state1 = Math.imul(state1 ^ code, 2654435761);
    state2 = Math.imul(state2 ^ code, 1597334677);
  }
  const mixed1 = Math.imul(state1 ^ (state1 >>> 16), 2246822507) ^ Math.imul(state2 ^ (state2 >>> 13), 3266489909);
  const mixed2 = Math.imul(state2 ^ (state2 >>> 16), 2246822507) ^ Math.imul(mixed1 ^ (mixed1 >>> 13), 3266489909);
  return hex8(mixed2) + hex8(mixed1);
}

/** Two hex digits per byte, looked up: `Number#toString(16)` of a large double is slow in V8. */
const HEX_PAIRS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

function hex8(word: number): string {
  return (
    (HEX_PAIRS[(word >>> 24) & 0xff] as string) +
    (HEX_PAIRS[(word >>> 16) & 0xff] as string) +
    (HEX_PAIRS[(word >>> 8) & 0xff] as string) +
    (HEX_PAIRS[word & 0xff] as string)
  );
}

/**
 * 128 bits of `text` as 32 hex characters: two cyrb53-style passes with independent seeds (not
 * cryptographic). The idempotency guard's store keys: a namespace, a tool and a key never reach a
 * store as they are, and two different triples collide only by chance (about 2^-64 for a billion keys).
 */
export function hash128(text: string): string {
  let state1 = 0x9e3779b9;
  let state2 = 0x85ebca6b;
  let state3 = 0xc2b2ae35;
  let state4 = 0x27d4eb2f;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    state1 = Math.imul(state1 ^ code, 2654435761);
    state2 = Math.imul(state2 ^ code, 1597334677);
    state3 = Math.imul(state3 ^ code, 2246822519);
    state4 = Math.imul(state4 ^ code, 3266489917);
  }
  state1 = Math.imul(state1 ^ (state1 >>> 16), 2246822507) ^ Math.imul(state2 ^ (state2 >>> 13), 3266489909);
  state2 = Math.imul(state2 ^ (state2 >>> 16), 2246822507) ^ Math.imul(state1 ^ (state1 >>> 13), 3266489909);
  state3 = Math.imul(state3 ^ (state3 >>> 16), 2654435761) ^ Math.imul(state4 ^ (state4 >>> 13), 1597334677);
  state4 = Math.imul(state4 ^ (state4 >>> 16), 2654435761) ^ Math.imul(state3 ^ (state3 >>> 13), 1597334677);
  return hex8(state1) + hex8(state2) + hex8(state3) + hex8(state4);
}
