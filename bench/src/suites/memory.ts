import { formatBytes, formatCount, round } from "../format.js";
import { settledHeap } from "../measure.js";
import { type CoreModule, PENDING } from "../ours.js";
import { cockatielBreaker, opossumBreaker } from "../peers.js";
import type { Cell, SuiteResult, TargetResult } from "../report-types.js";

const TOOL_NAMES = 100_000;
const IDEMPOTENCY_KEYS = 1_000_000;
const BOUND_KEYS = 300_000;
const OPOSSUM_BREAKERS = 10_000;

/** What the measurement being taken keeps alive; cleared before the next baseline. */
let held: unknown;

/**
 * Heap bytes retained per item by what `build` returns: a forced-GC baseline (after dropping the
 * previous measurement's objects), build, a forced-GC reading while the result is still held.
 */
async function retained(count: number, build: () => unknown): Promise<number> {
  held = undefined;
  await nextTurn();
  const before = settledHeap();
  held = await build();
  await nextTurn();
  const after = settledHeap();
  return (after - before) / count;
}

/** A fresh macrotask: no promise job or suspended frame of the previous step still holds its objects. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function names(prefix: string, count: number): string[] {
  // Built before the baseline reading: the application owns its tool names and keys.
  const list = Array.from({ length: count }, (_, index) => `${prefix}${index.toString().padStart(7, "0")}`);
  // Hashing flattens concatenated strings in place; do it now, or the first Map they enter pays for it.
  new Set(list).clear();
  return list;
}

/** 4. Memory: bytes per breaker, per stored idempotency record, and the registry bounds. */
export async function memory(core: CoreModule | undefined): Promise<SuiteResult> {
  const rows: Record<string, Cell>[] = [];
  const targets: TargetResult[] = [];
  const notes: string[] = [];
  const data: Record<string, unknown> = {};
  const toolNames = names("tool_", TOOL_NAMES);

  if (core === undefined) {
    rows.push({ what: "retry-reflect breakers and idempotency records", items: PENDING, "bytes/item": PENDING });
  } else {
    const { CircuitBreaker, InMemoryIdempotencyStore, RetryReflectPlugin } = core;
    const breakerWith = (options: { threshold?: number; maxKeys?: number }, outcome: "success" | "failure") => {
      const breaker = new CircuitBreaker(options);
      for (const name of toolNames) {
        const decision = breaker.acquire(name);
        if (!decision.admitted) continue;
        if (outcome === "success") breaker.onSuccess(name, decision.permit);
        else breaker.onFailure(name, decision.permit);
      }
      return breaker;
    };
    const unbounded = { maxKeys: TOOL_NAMES * 2 };
    const idle = await retained(TOOL_NAMES, () => breakerWith(unbounded, "success"));
    rows.push({
      what: "CircuitBreaker: tool that only succeeded (closed, never failed)",
      items: formatCount(TOOL_NAMES),
      "bytes/item": formatBytes(idle),
      entries: (held as InstanceType<typeof CircuitBreaker>).size,
    });
    const counted = await retained(TOOL_NAMES, () => breakerWith(unbounded, "failure"));
    rows.push({
      what: "CircuitBreaker: closed with 1 failure counted",
      items: formatCount(TOOL_NAMES),
      "bytes/item": formatBytes(counted),
      entries: (held as InstanceType<typeof CircuitBreaker>).size,
    });
    const open = await retained(TOOL_NAMES, () => breakerWith({ ...unbounded, threshold: 1 }, "failure"));
    rows.push({
      what: "CircuitBreaker: open",
      items: formatCount(TOOL_NAMES),
      "bytes/item": formatBytes(open),
      entries: (held as InstanceType<typeof CircuitBreaker>).size,
    });

    // Through the plugin, limits raised: every tool failed once and got a reflection (breaker entry + attempt counter).
    const failOnce = async (plugin: InstanceType<typeof RetryReflectPlugin>) => {
      for (const name of toolNames) {
        await plugin.execute({ toolName: name, args: {}, scope: "run-1" }, async () => {
          throw new Error("the report service answered with an unexpected page");
        });
      }
      return plugin;
    };
    const raised = { maxCircuitBreakers: TOOL_NAMES * 2, maxAttemptCounters: TOOL_NAMES * 2 };
    const perFailedTool = await retained(TOOL_NAMES, () => failOnce(RetryReflectPlugin.create(raised)));
    rows.push({
      what: "plugin: tool that failed once in a run (reflected)",
      items: formatCount(TOOL_NAMES),
      "bytes/item": formatBytes(perFailedTool),
    });
    // Exhausted (maxRetries 0): the tracker keeps the final ToolError per (scope, tool).
    const perExhaustedTool = await retained(TOOL_NAMES, () => failOnce(RetryReflectPlugin.create({ ...raised, maxRetries: 0 })));
    rows.push({
      what: "plugin: tool whose retries are exhausted in a run (maxRetries 0)",
      items: formatCount(TOOL_NAMES),
      "bytes/item": formatBytes(perExhaustedTool),
    });

    // Bounds, default limits.
    const boundedBreaker = await retained(TOOL_NAMES, () => breakerWith({}, "failure"));
    const breaker = held as InstanceType<typeof CircuitBreaker>;
    rows.push({
      what: `CircuitBreaker, default maxKeys ${formatCount(breaker.maxKeys)}: ${formatCount(TOOL_NAMES)} failing tools`,
      items: formatCount(TOOL_NAMES),
      "bytes/item": `${formatBytes(boundedBreaker * TOOL_NAMES)} total`,
      entries: breaker.size,
    });
    const pluginOneScope = await retained(TOOL_NAMES, () => failOnce(RetryReflectPlugin.create({})));
    rows.push({
      what: `plugin, default limits: ${formatCount(TOOL_NAMES)} failing tools in one run`,
      items: formatCount(TOOL_NAMES),
      "bytes/item": `${formatBytes(pluginOneScope * TOOL_NAMES)} total (${formatBytes(perFailedTool * TOOL_NAMES)} with limits raised)`,
    });
    const pluginManyScopes = await retained(TOOL_NAMES, async () => {
      const plugin = RetryReflectPlugin.create({});
      for (const [index, name] of toolNames.entries()) {
        await plugin.execute({ toolName: name, args: {}, scope: `run-${index}` }, async () => {
          throw new Error("the report service answered with an unexpected page");
        });
      }
      return plugin;
    });
    rows.push({
      what: `plugin, default limits: ${formatCount(TOOL_NAMES)} failing tools, one run each`,
      items: formatCount(TOOL_NAMES),
      "bytes/item": `${formatBytes(pluginManyScopes * TOOL_NAMES)} total`,
    });

    held = undefined;
    const keys = names("send_email\u0000key-", IDEMPOTENCY_KEYS);
    const fill = async (store: InstanceType<typeof InMemoryIdempotencyStore>, count: number) => {
      const result = { ok: true };
      for (let index = 0; index < count; index++) {
        const key = keys[index]!;
        const begun = await store.begin(key, "f1e2d3c4b5a6", 30_000);
        if (begun.status === "acquired") await store.complete(key, begun.token, result, 86_400_000);
      }
      return store;
    };
    const perRecord = await retained(IDEMPOTENCY_KEYS, () =>
      fill(new InMemoryIdempotencyStore({ maxEntries: IDEMPOTENCY_KEYS * 2 }), IDEMPOTENCY_KEYS),
    );
    rows.push({
      what: "InMemoryIdempotencyStore: completed record, small shared result",
      items: formatCount(IDEMPOTENCY_KEYS),
      "bytes/item": formatBytes(perRecord),
      entries: (held as InstanceType<typeof InMemoryIdempotencyStore>).size,
    });
    const storeBound = await retained(BOUND_KEYS, () => fill(new InMemoryIdempotencyStore({}), BOUND_KEYS));
    const store = held as InstanceType<typeof InMemoryIdempotencyStore>;
    rows.push({
      what: `InMemoryIdempotencyStore, default maxEntries ${formatCount(store.maxEntries)}: ${formatCount(BOUND_KEYS)} keys`,
      items: formatCount(BOUND_KEYS),
      "bytes/item": `${formatBytes(storeBound * BOUND_KEYS)} total`,
      entries: store.size,
    });
    held = undefined;

    const pluginBounded = pluginOneScope < perFailedTool * 0.25;
    data.breakers = {
      idleBytesPerTool: round(idle),
      closedWithFailureBytesPerTool: round(counted),
      openBytesPerTool: round(open),
      pluginBytesPerFailedTool: round(perFailedTool),
      pluginBytesPerExhaustedTool: round(perExhaustedTool),
      bound: { maxKeys: breaker.maxKeys, entries: breaker.size, bytes: round(boundedBreaker * TOOL_NAMES, 0) },
      pluginDefaultLimitsOneScopeBytes: round(pluginOneScope * TOOL_NAMES, 0),
      pluginDefaultLimitsManyScopesBytes: round(pluginManyScopes * TOOL_NAMES, 0),
    };
    data.idempotency = {
      bytesPerRecord: round(perRecord),
      bound: { maxEntries: store.maxEntries, entries: store.size, bytes: round(storeBound * BOUND_KEYS, 0) },
    };
    targets.push({
      name: "bytes per idle breaker",
      target: "< 300 B (100,000 tool names)",
      measured: `${formatBytes(idle)} (never failed: no entry), ${formatBytes(counted)} (closed, 1 failure), ${formatBytes(open)} (open)`,
      met: Math.max(idle, counted) < 300,
    });
    targets.push({
      name: "registry bounds hold",
      target: "memory bounded by the limits (breakers, counters, records)",
      measured:
        `breakers ${formatCount(breaker.size)} kept of ${formatCount(TOOL_NAMES)}; records ${formatCount(store.size)} kept of ${formatCount(BOUND_KEYS)}; ` +
        `plugin with default limits, ${formatCount(TOOL_NAMES)} failing tools in one run: ${formatBytes(pluginOneScope * TOOL_NAMES)} ` +
        `(${formatBytes(perFailedTool * TOOL_NAMES)} unbounded)`,
      met: breaker.size <= breaker.maxKeys && store.size <= store.maxEntries && pluginBounded,
    });
    if (!pluginBounded) {
      notes.push(
        "The plugin's attempt counters are bounded by scope count (`maxAttemptCounters`), not by tools per scope: one run that touches 100,000 failing tools keeps 100,000 counters. See FINDINGS.md, item 5.",
      );
    }
    notes.push(
      "Tool names and keys are allocated before the baseline reading (the application owns them); the bytes are what the library adds.",
      "A closed circuit that never failed has no entry at all, so the per-breaker target is judged on the smallest entry that exists (closed with one failure).",
    );
  }

  // Peers: one breaker object per tool (neither has a keyed registry).
  const cockatiel = await retained(TOOL_NAMES, () => toolNames.map(() => cockatielBreaker()));
  rows.push({
    what: "cockatiel circuitBreaker(ConsecutiveBreaker) per tool",
    items: formatCount(TOOL_NAMES),
    "bytes/item": formatBytes(cockatiel),
  });
  const opossum = await retained(OPOSSUM_BREAKERS, () =>
    Array.from({ length: OPOSSUM_BREAKERS }, () => opossumBreaker(async () => undefined)),
  );
  for (const breaker of held as Array<ReturnType<typeof opossumBreaker>>) breaker.shutdown();
  held = undefined;
  rows.push({
    what: "opossum CircuitBreaker per tool (2 intervals each)",
    items: formatCount(OPOSSUM_BREAKERS),
    "bytes/item": formatBytes(opossum),
  });
  data.peers = { cockatielBytesPerBreaker: round(cockatiel), opossumBytesPerBreaker: round(opossum) };

  return {
    id: "memory",
    title: "4. Memory",
    method:
      "process.memoryUsage().heapUsed after two forced GCs (--expose-gc), before and after building the items (the previous measurement released first), divided by their count.",
    tables: [{ table: { columns: ["what", "items", "bytes/item", "entries"], rows } }],
    targets,
    notes,
    data,
  };
}
