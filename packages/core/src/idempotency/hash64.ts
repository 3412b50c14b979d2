import { escapedInJson } from "./value-walk.js";

/**
 * cyrb53's two 32-bit states over a text given in pieces (`add`), mixed (`digest`) into 8 + 8 hex
 * characters (not cryptographic). The pieces are read in place: hashing `a` then `b` gives what
 * hashing `a + b` gives, without the joined string.
 */
export class Hash64 {
  private state1 = 0xdeadbeef | 0;
  private state2 = 0x41c6ce57 | 0;

  add(text: string): void {
    let state1 = this.state1;
    let state2 = this.state2;
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      state1 = Math.imul(state1 ^ code, 2654435761);
      state2 = Math.imul(state2 ^ code, 1597334677);
    }
    this.state1 = state1;
    this.state2 = state2;
  }

  /** Hashes `"text"` in one pass when nothing in it needs escaping (true); else hashes nothing (false). */
  addQuoted(text: string): boolean {
    let state1 = Math.imul(this.state1 ^ QUOTE, 2654435761);
    let state2 = Math.imul(this.state2 ^ QUOTE, 1597334677);
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (escapedInJson(code)) return false;
      state1 = Math.imul(state1 ^ code, 2654435761);
      state2 = Math.imul(state2 ^ code, 1597334677);
    }
    this.state1 = Math.imul(state1 ^ QUOTE, 2654435761);
    this.state2 = Math.imul(state2 ^ QUOTE, 1597334677);
    return true;
  }

  digest(): string {
    const { state1, state2 } = this;
    const mixed1 = Math.imul(state1 ^ (state1 >>> 16), 2246822507) ^ Math.imul(state2 ^ (state2 >>> 13), 3266489909);
    const mixed2 = Math.imul(state2 ^ (state2 >>> 16), 2246822507) ^ Math.imul(mixed1 ^ (mixed1 >>> 13), 3266489909);
    return hex16(mixed2, mixed1);
  }
}

const QUOTE = 0x22;

/** cyrb53's two 32-bit states over `text`, mixed, as 8 + 8 hex characters (not cryptographic). */
export function hash64(text: string): string {
  const hash = new Hash64();
  hash.add(text);
  return hash.digest();
}

/** The hex digits' character codes, looked up: `Number#toString(16)` of a large double is slow in V8. */
const HEX_CODES = Array.from("0123456789abcdef", (digit) => digit.charCodeAt(0));

function hexCode(word: number, shift: number): number {
  return HEX_CODES[(word >>> shift) & 15] as number;
}

/**
 * The 16 hex digits of two words as one flat string, made at once: joined pieces made a rope that
 * was flattened again at its first comparison or Map lookup (~80 ns of a ~250 ns fingerprint).
 */
function hex16(high: number, low: number): string {
  return String.fromCharCode(
    hexCode(high, 28),
    hexCode(high, 24),
    hexCode(high, 20),
    hexCode(high, 16),
    hexCode(high, 12),
    hexCode(high, 8),
    hexCode(high, 4),
    hexCode(high, 0),
    hexCode(low, 28),
    hexCode(low, 24),
    hexCode(low, 20),
    hexCode(low, 16),
    hexCode(low, 12),
    hexCode(low, 8),
    hexCode(low, 4),
    hexCode(low, 0),
  );
}

/**
 * 128 bits of a sequence of texts as 32 hex characters: two cyrb53-style pairs of states with
 * independent seeds (not cryptographic), each text's length mixed in before it, so that no two
 * different sequences read as one ("ab","c" is not "a","bc"). The texts are read in place: no
 * joined string is built (a fresh one would be flattened first, costing more than the hash). The
 * idempotency guard's store keys: a namespace, a tool and a key never reach a store as they are,
 * and two different triples collide only by chance (about 2^-64 for a billion keys).
 */
export function hash128(...texts: string[]): string {
  let state1 = 0x9e3779b9;
  let state2 = 0x85ebca6b;
  let state3 = 0xc2b2ae35;
  let state4 = 0x27d4eb2f;
  for (const text of texts) {
    const length = text.length;
    state1 = Math.imul(state1 ^ length, 2654435761);
    state2 = Math.imul(state2 ^ length, 1597334677);
    state3 = Math.imul(state3 ^ length, 2246822519);
    state4 = Math.imul(state4 ^ length, 3266489917);
    for (let index = 0; index < length; index++) {
      const code = text.charCodeAt(index);
      state1 = Math.imul(state1 ^ code, 2654435761);
      state2 = Math.imul(state2 ^ code, 1597334677);
      state3 = Math.imul(state3 ^ code, 2246822519);
      state4 = Math.imul(state4 ^ code, 3266489917);
    }
  }
  state1 = Math.imul(state1 ^ (state1 >>> 16), 2246822507) ^ Math.imul(state2 ^ (state2 >>> 13), 3266489909);
  state2 = Math.imul(state2 ^ (state2 >>> 16), 2246822507) ^ Math.imul(state1 ^ (state1 >>> 13), 3266489909);
  state3 = Math.imul(state3 ^ (state3 >>> 16), 2654435761) ^ Math.imul(state4 ^ (state4 >>> 13), 1597334677);
  state4 = Math.imul(state4 ^ (state4 >>> 16), 2654435761) ^ Math.imul(state3 ^ (state3 >>> 13), 1597334677);
  writeHex(state1, 0);
  writeHex(state2, 8);
  writeHex(state3, 16);
  writeHex(state4, 24);
  return HEX_DECODER.decode(HEX_BYTES);
}

/** The 32 hex digits of `hash128`, written as bytes and decoded once: one flat string, no joins (a joined one is flattened again when it is a Map key). */
const HEX_BYTES = new Uint8Array(32);
const HEX_DECODER = new TextDecoder();

function writeHex(word: number, at: number): void {
  for (let nibble = 0; nibble < 8; nibble++) HEX_BYTES[at + nibble] = HEX_CODES[(word >>> (28 - 4 * nibble)) & 15] as number;
}
