/** What a code path created, per call: timers, abort controllers, event listeners. */
export interface HotPathCounts {
  readonly setTimeout: number;
  readonly setInterval: number;
  readonly setImmediate: number;
  readonly abortController: number;
  readonly addEventListener: number;
}

/**
 * Runs `fn` `calls` times while counting, through patched globals, the timers, `AbortController`s
 * and `EventTarget` listeners it creates. Returns counts per call. Code that captured a global
 * before the patch is not seen, so a zero means "none through the globals".
 */
export async function auditHotPath(fn: () => unknown, calls = 1000): Promise<HotPathCounts> {
  const counts = { setTimeout: 0, setInterval: 0, setImmediate: 0, abortController: 0, addEventListener: 0 };
  const original = {
    setTimeout: globalThis.setTimeout,
    setInterval: globalThis.setInterval,
    setImmediate: globalThis.setImmediate,
    AbortController: globalThis.AbortController,
    addEventListener: EventTarget.prototype.addEventListener,
  };
  for (let warm = 0; warm < 100; warm++) await fn();
  const OriginalAbortController = original.AbortController;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    counts.setTimeout++;
    return original.setTimeout(...args);
  }) as typeof setTimeout;
  globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
    counts.setInterval++;
    return original.setInterval(...args);
  }) as typeof setInterval;
  globalThis.setImmediate = ((...args: Parameters<typeof setImmediate>) => {
    counts.setImmediate++;
    return original.setImmediate(...args);
  }) as typeof setImmediate;
  globalThis.AbortController = class CountedAbortController extends OriginalAbortController {
    constructor() {
      super();
      counts.abortController++;
    }
  };
  EventTarget.prototype.addEventListener = function countedAddEventListener(
    this: EventTarget,
    ...args: Parameters<EventTarget["addEventListener"]>
  ) {
    counts.addEventListener++;
    return original.addEventListener.apply(this, args);
  };
  try {
    for (let call = 0; call < calls; call++) await fn();
  } finally {
    globalThis.setTimeout = original.setTimeout;
    globalThis.setInterval = original.setInterval;
    globalThis.setImmediate = original.setImmediate;
    globalThis.AbortController = original.AbortController;
    EventTarget.prototype.addEventListener = original.addEventListener;
  }
  return {
    setTimeout: counts.setTimeout / calls,
    setInterval: counts.setInterval / calls,
    setImmediate: counts.setImmediate / calls,
    abortController: counts.abortController / calls,
    addEventListener: counts.addEventListener / calls,
  };
}

export function describeCounts(counts: HotPathCounts): string {
  const parts = Object.entries(counts)
    .filter(([, value]) => value > 0)
    .map(([key, value]) => `${key} ${Number(value.toFixed(2))}/call`);
  return parts.length === 0 ? "none" : parts.join(", ");
}
