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
