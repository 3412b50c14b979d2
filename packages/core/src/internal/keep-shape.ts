// V8 holds the hidden class ("map") of an object built field by field only weakly: through the
// transition from the map before the field was added, and from the optimized code that reads the
// object. When a full garbage collection finds no live object of that map, it clears the map and
// throws away every optimized function that embeds it ("embedded weak objects cleared"), and the
// next calls run unoptimized until V8 optimizes them again: measured on Node 24, the OpenAI Agents
// adapter's healthy call cost 3-4× its steady cost for the first ~25,000 calls after a full
// collection made while no call was in flight. An object made per call (an attempt, a host call)
// is gone between calls, so its map dies with every such collection; one instance of it kept for
// the life of the process keeps the map, and the code that embeds it, alive.

const kept: object[] = [];

/**
 * Keeps `instance` (built as the per-call objects of its class are built, with placeholder values)
 * for the life of the process, so that the map of those objects survives full collections. Called
 * once per class, when its module loads; the instance must hold no caller's data.
 */
export function keepShape(instance: object): void {
  kept.push(instance);
}
