/**
 * A seeded generator of numbers in [0, 1) (mulberry32: small, fast, 32-bit state): the same seed
 * gives the same sequence. What `injectFaults` draws its probabilities from; use it for your own
 * fakes (a simulated model, a flaky service) so that a test run is reproducible from its seed.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}
