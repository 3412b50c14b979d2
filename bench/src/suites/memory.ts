import { formatBytes, formatCount, round } from "../format.js";
import { settledHeap } from "../measure.js";
import { PENDING, type CoreModule } from "../ours.js";
import { cockatielBreaker, opossumBreaker } from "../peers.js";
import type { Cell, SuiteResult, TargetResult } from "../report-types.js";

const TOOL_NAMES = 100_000;
const IDEMPOTENCY_KEYS = 1_000_000;
const OPOSSUM_BREAKERS = 10_000;

/** Heap bytes per item retained by `build`, which must keep what it builds reachable until `release`. */
function bytesPerItem<T>(count: number, build: () => T): { perItem: number; kept: T } {
  const before = settledHeap();
  const kept = build();
  const after = settledHeap();
  return { perItem: (after - before) / count, kept };
}

function names(prefix: string, count: number): string[] {
  // Built (and flattened) before the baseline reading: the caller owns its tool names and keys.
  return Array.from({ length: count }, (_, index) => `${prefix}${index.toString().padStart(7, "0")}`);
}

/** 4. Memory: bytes per breaker, per stored idempotency record, and the registry bounds. */
export async function memory(core: CoreModule | undefined): Promise<SuiteResult> {
  const rows: Record<string, Cell>[] = [];
  const targets: TargetResult[] = [];
  const notes: string[] = [];
  const data: Record<string, unknown> = {};
  const toolNames = names("tool_", TOOL_NAMES);
  const failing = () => undefined;

  if (core === undefined) {
    rows.push({ what: "retry-reflect breakers and idempotency records", items: PENDING, "bytes/item": PENDING });
  } else {
    // Our breakers: a closed circuit that never failed has no entry at all.
    const idle = new core.CircuitBreaker({ maxKeys: TOOL_NAMES * 2 });
    const idleResult = bytesPerItem(TOOL_NAMES, () => {
      for (const name of toolNames) {
        const decision = idle.acquire(name);
        if (decision.admitted) idle.onSuccess(name, decision.permit);
      }
      return idle;
    });
    rows.push({ what: "retry-reflect CircuitBreaker: tool that only succeeded (closed, no entry)", items: formatCount(TOOL_NAMES), "bytes/item": formatBytes(idleResult.perItem), tracked: idle.size });

    // The smallest entry that exists: closed with one failure counted.
    const counting = new core.CircuitBreaker({ maxKeys: TOOL_NAMES * 2 });
    const countingResult = bytesPerItem(TOOL_NAMES, () => {
      for (const name of toolNames) {
        const decision = counting.acquire(name);
        if (decision.admitted) counting.onFailure(name, decision.permit);
      }
      return counting;
    });
    rows.push({ what: "retry-reflect CircuitBreaker: closed with 1 failure counted", items: formatCount(TOOL_NAMES), "bytes/item": formatBytes(countingResult.perItem), tracked: counting.size });

    const open = new core.CircuitBreaker({ maxKeys: TOOL_NAMES * 2, threshold: 1 });
    const openResult = bytesPerItem(TOOL_NAMES, () => {
      for (const name of toolNames) {
        const decision = open.acquire(name);
        if (decision.admitted) open.onFailure(name, decision.permit);
      }
      return open;
    });
    rows.push({ what: "retry-reflect CircuitBreaker: open", items: formatCount(TOOL_NAMES), "bytes/item": formatBytes(openResult.perItem), tracked: open.size });

    // Through the plugin: every tool failed once (a breaker entry and an attempt counter each).
    const plugin = core.RetryReflectPlugin.create({ maxCircuitBreakers: TOOL_NAMES * 2, maxTrackedScopes: TOOL_NAMES * 2, maxRetries: 0 });
    const before = settledHeap();
    for (const name of toolNames) {
      await plugin.execute({ toolName: name, args: {}, scope: "run-1" }, async () => {
        throw new core.ToolError({ code: "TRANSIENT", message: "upstream 503", recoverable: true });
      });
    }
    const pluginPerTool = (settledHeap() - before) / TOOL_NAMES;
    rows.push({ what: "retry-reflect plugin: tool that failed once (breaker entry + attempt counter)", items: formatCount(TOOL_NAMES), "bytes/item": formatBytes(pluginPerTool) });

    // The bound through the plugin: default limits, 100,000 distinct failing tools.
    const defaultPlugin = core.RetryReflectPlugin.create({ maxRetries: 0 });
    const defaultBefore = settledHeap();
    for (const name of toolNames) {
      await defaultPlugin.execute({ toolName: name, args: {}, scope: "run-1" }, async () => {
        throw new core.ToolError({ code: "TRANSIENT", message: "upstream 503", recoverable: true });
      });
    }
    const defaultGrowth = settledHeap() - defaultBefore;
    const pluginBoundHolds = defaultGrowth < pluginPerTool * TOOL_NAMES * 0.25;
    rows.push({
      what: "retry-reflect plugin, default limits (10,000 breakers, 10,000 counters): 100,000 failing tools",
      items: formatCount(TOOL_NAMES),
      "bytes/item": `${formatBytes(defaultGrowth)} total (unbounded would be ≈ ${formatBytes(pluginPerTool * TOOL_NAMES)})`,
    });

    // The bound: default limits, 100,000 distinct failing tools.
    const bounded = new core.CircuitBreaker({});
    const boundBefore = settledHeap();
    for (const name of toolNames) {
      const decision = bounded.acquire(name);
      if (decision.admitted) bounded.onFailure(name, decision.permit);
    }
    const boundGrowth = settledHeap() - boundBefore;
    const boundHolds = bounded.size <= bounded.maxKeys;
    rows.push({
      what: `retry-reflect CircuitBreaker, default maxKeys ${formatCount(bounded.maxKeys)}: 100,000 failing tools`,
      items: formatCount(TOOL_NAMES),
      "bytes/item": `${formatBytes(boundGrowth)} total`,
      tracked: bounded.size,
    });

    data.breakers = {
      idleBytesPerTool: round(idleResult.perItem),
      closedWithFailureBytesPerTool: round(countingResult.perItem),
      openBytesPerTool: round(openResult.perItem),
      pluginBytesPerFailedTool: round(pluginPerTool),
      bound: { maxKeys: bounded.maxKeys, tracked: bounded.size, growthBytes: boundGrowth },
      pluginBound: { growthBytes: defaultGrowth, unboundedProjectionBytes: round(pluginPerTool * TOOL_NAMES) },
    };
    targets.push({
      name: "bytes per idle breaker",
      target: "< 300 B (100,000 tool names)",
      measured: `${formatBytes(idleResult.perItem)} (never failed), ${formatBytes(countingResult.perItem)} (closed with a counted failure), ${formatBytes(openResult.perItem)} (open)`,
      met: Math.max(idleResult.perItem, countingResult.perItem) < 300,
    });
    // Release before the next allocation-heavy step.
    idle.reset();
    counting.reset();
    open.reset();

    // Idempotency records: 1,000,000 completed keys with a small (shared) result.
    const keys = names("send_email\u0000key-", IDEMPOTENCY_KEYS);
    const store = new core.InMemoryIdempotencyStore({ maxEntries: IDEMPOTENCY_KEYS * 2 });
    const result = { ok: true };
    const storeResult = bytesPerItem(IDEMPOTENCY_KEYS, () => {
      for (const key of keys) {
        const begun = store.begin(key, "f1e2d3c4b5a6", 30_000);
        if (begun.status === "acquired") store.complete(key, begun.token, result, 86_400_000);
      }
      return store;
    });
    rows.push({ what: "retry-reflect InMemoryIdempotencyStore: completed record, small shared result", items: formatCount(IDEMPOTENCY_KEYS), "bytes/item": formatBytes(storeResult.perItem), tracked: store.size });
    store.clear();

    const boundedStore = new core.InMemoryIdempotencyStore({});
    const storeBoundBefore = settledHeap();
    for (const key of keys) {
      const begun = boundedStore.begin(key, "f1e2d3c4b5a6", 30_000);
      if (begun.status === "acquired") boundedStore.complete(key, begun.token, result, 86_400_000);
    }
    const storeGrowth = settledHeap() - storeBoundBefore;
    const storeBoundHolds = boundedStore.size <= boundedStore.maxEntries;
    rows.push({
      what: `retry-reflect InMemoryIdempotencyStore, default maxEntries ${formatCount(boundedStore.maxEntries)}: 1,000,000 keys`,
      items: formatCount(IDEMPOTENCY_KEYS),
      "bytes/item": `${formatBytes(storeGrowth)} total`,
      tracked: boundedStore.size,
    });
    boundedStore.clear();
    data.idempotency = {
      bytesPerRecord: round(storeResult.perItem),
      bound: { maxEntries: boundedStore.maxEntries, tracked: boundedStore.size, growthBytes: storeGrowth },
    };
    targets.push({
      name: "registry bounds hold",
      target: "breakers ≤ maxKeys, idempotency records ≤ maxEntries",
      measured: `breakers ${formatCount(bounded.size)} of ${formatCount(TOOL_NAMES)} failing tools; plugin grew ${formatBytes(defaultGrowth)} for 100,000 failing tools; records ${formatCount(boundedStore.size)} of ${formatCount(IDEMPOTENCY_KEYS)} keys`,
      met: boundHolds && storeBoundHolds && pluginBoundHolds,
    });
    notes.push(
      "Tool names and idempotency keys are allocated before the baseline reading (the application owns them); the bytes are what the library adds.",
      "A tool whose circuit is closed and has never failed costs our breaker nothing: entries exist only for tools with failures, so the per-breaker target is judged on the closed-with-a-failure entry.",
    );
  }

  // Peers: one breaker object per tool (neither has a keyed registry).
  const cockatielResult = bytesPerItem(TOOL_NAMES, () => toolNames.map(() => cockatielBreaker()));
  rows.push({ what: "cockatiel circuitBreaker(ConsecutiveBreaker) per tool", items: formatCount(TOOL_NAMES), "bytes/item": formatBytes(cockatielResult.perItem) });
  const opossumResult = bytesPerItem(OPOSSUM_BREAKERS, () => Array.from({ length: OPOSSUM_BREAKERS }, () => opossumBreaker(async () => failing())));
  rows.push({ what: "opossum CircuitBreaker per tool (2 intervals each)", items: formatCount(OPOSSUM_BREAKERS), "bytes/item": formatBytes(opossumResult.perItem) });
  for (const breaker of opossumResult.kept) breaker.shutdown();
  data.peers = { cockatielBytesPerBreaker: round(cockatielResult.perItem), opossumBytesPerBreaker: round(opossumResult.perItem) };

  return {
    id: "memory",
    title: "4. Memory",
    method:
      "process.memoryUsage().heapUsed after two forced GCs (--expose-gc), before and after building the items, divided by their count.",
    tables: [{ table: { columns: ["what", "items", "bytes/item", "tracked"], rows } }],
    targets,
    notes,
    data,
  };
}
