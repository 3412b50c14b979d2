// Latency per call: wall clock of sequential calls (a PING, one script call, a guarded write and
// its replay, and with a replica the guarded write with the `replicas` setting) for each client,
// in interleaved blocks, p50 and p99.
import type { CoreModule } from "../../ours.js";
import { type Connection, scriptCalls } from "./connections.js";
import { type ClientKind, LATENCY_BLOCK, LATENCY_SAMPLES, REPLICATED, REPLICATED_LABEL, type RedisModule } from "./parameters.js";
import { ok, storePlugin } from "./store-plugin.js";

export interface LatencyRow {
  readonly kind: ClientKind;
  readonly operation: string;
  readonly p50Ns: number;
  readonly p99Ns: number;
  readonly meanNs: number;
  readonly samples: number;
  readonly failures: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/**
 * Per client kind, p50/p99/mean wall clock of each operation, and the server's own µs per EVALSHA
 * over the run. `replicated`: the server has a replica, and the write with `replicas` is measured.
 */
export async function latencies(
  core: CoreModule,
  redis: RedisModule,
  connections: readonly Connection[],
  admin: Connection,
  cleanup: Array<() => Promise<void>>,
  replicated: boolean,
): Promise<{ rows: LatencyRow[]; evalshaServerUs: number }> {
  interface Probe {
    readonly kind: ClientKind;
    readonly operation: string;
    readonly run: (i: number) => Promise<boolean>;
    readonly samples: number[];
    failures: number;
  }
  const probes: Probe[] = [];
  for (const connection of connections) {
    const stores = redis.redisStores({ client: connection.client, prefix: `bench-lat-${connection.kind}:` });
    cleanup.push(() => stores.close());
    await stores.circuitBreaker.subscribed;
    const plugin = storePlugin(core, stores);
    const kind = connection.kind;
    probes.push(
      {
        kind,
        operation: "PING (the client's round trip, for scale)",
        run: async () => (await connection.ping()) === "PONG",
        samples: [],
        failures: 0,
      },
      {
        kind,
        operation: "one script call: `idempotency.begin` on a new key",
        run: async (i) => (await stores.idempotency.begin(`lat-begin-${i}`, "fp", 30_000)).status === "acquired",
        samples: [],
        failures: 0,
      },
      {
        kind,
        operation: "guarded write through the plugin (begin + tool + complete)",
        run: async (i) => {
          const outcome = await plugin.execute(
            { toolName: "send_payment", args: { idempotency_key: `lat-w-${i}`, amount: 5 }, scope: `lat-${i}`, namespace: `lat-${i}` },
            ok,
          );
          return outcome.status === "success" && !outcome.replayed;
        },
        samples: [],
        failures: 0,
      },
      {
        kind,
        operation: "replayed write through the plugin (begin answers)",
        run: async (i) => {
          const outcome = await plugin.execute(
            { toolName: "send_payment", args: { idempotency_key: `lat-w-${i}`, amount: 5 }, scope: `lat-r-${i}`, namespace: `lat-${i}` },
            ok,
          );
          return outcome.status === "success" && outcome.replayed;
        },
        samples: [],
        failures: 0,
      },
    );
    if (replicated) {
      const waiting = redis.redisStores({ client: connection.client, prefix: `bench-latr-${kind}:`, replicas: REPLICATED });
      cleanup.push(() => waiting.close());
      await waiting.circuitBreaker.subscribed;
      const waitingPlugin = storePlugin(core, waiting);
      probes.push({
        kind,
        operation: `guarded write through the plugin, ${REPLICATED_LABEL} (begin + WAIT + tool + complete + WAIT)`,
        run: async (i) => {
          const outcome = await waitingPlugin.execute(
            {
              toolName: "send_payment",
              args: { idempotency_key: `lat-rw-${i}`, amount: 5 },
              scope: `lat-rw-${i}`,
              namespace: `lat-rw-${i}`,
            },
            ok,
          );
          return outcome.status === "success" && !outcome.replayed;
        },
        samples: [],
        failures: 0,
      });
    }
  }
  // Warm-up (scripts loaded, JIT), on keys of their own.
  for (const probe of probes) for (let i = 0; i < 200; i++) await probe.run(-1 - i);
  await admin.command(["CONFIG", "RESETSTAT"]);
  // Interleaved blocks: every probe gets a share of each quiet or busy moment of the machine.
  for (let offset = 0; offset < LATENCY_SAMPLES; offset += LATENCY_BLOCK) {
    for (const probe of probes) {
      for (let i = offset; i < offset + LATENCY_BLOCK; i++) {
        const start = process.hrtime.bigint();
        let fine = false;
        try {
          fine = await probe.run(i);
        } catch {
          fine = false;
        }
        probe.samples.push(Number(process.hrtime.bigint() - start));
        if (!fine) probe.failures++;
      }
    }
  }
  const { evalshaServerUs } = await scriptCalls(admin);
  const rows = probes.map((probe) => {
    const sorted = [...probe.samples].sort((a, b) => a - b);
    return {
      kind: probe.kind,
      operation: probe.operation,
      p50Ns: percentile(sorted, 50),
      p99Ns: percentile(sorted, 99),
      meanNs: sorted.reduce((sum, each) => sum + each, 0) / sorted.length,
      samples: sorted.length,
      failures: probe.failures,
    };
  });
  return { rows, evalshaServerUs };
}
