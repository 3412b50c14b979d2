// The healthy call (a no-op tool on a closed circuit), as the success-path suite measures it: the
// in-memory plugin against plugins with the Redis breaker store, and the scripts Redis ran meanwhile.
import { allocatedPerCall, type Contestant, compare, median, type Timing } from "../../measure.js";
import type { CoreModule } from "../../ours.js";
import { type Connection, scriptCalls } from "./connections.js";
import { type ClientKind, MEMORY, type RedisModule, redisContestant, SUCCESS_ROUNDS } from "./parameters.js";

export interface HealthyCallComparison {
  readonly timings: Timing[];
  readonly allocations: Map<string, number>;
  /** Per client kind: the median over rounds of (Redis store's round mean / in-memory plugin's round mean). */
  readonly ratios: Map<ClientKind, number>;
  readonly roundRatios: Map<ClientKind, number[]>;
  /** EVALSHA + EVAL the server ran while the healthy calls were measured. */
  readonly scriptsDuring: number;
}

/** The floor, the in-memory plugin and one Redis-store plugin per connection, in interleaved rounds; the per-round ratios. */
export async function healthyCall(
  core: CoreModule,
  redis: RedisModule,
  connections: readonly Connection[],
  admin: Connection,
  cleanup: Array<() => Promise<void>>,
): Promise<HealthyCallComparison> {
  const args = { city: "nyc" };
  const tool = async (_args?: unknown) => 1;
  const memory = core.RetryReflectPlugin.create({});
  const contestants: Contestant[] = [
    ["floor: await tool()", () => tool(args)],
    [MEMORY, () => memory.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool)],
  ];
  for (const connection of connections) {
    const stores = redis.redisStores({ client: connection.client, prefix: `bench-sp-${connection.kind}:` });
    cleanup.push(() => stores.close());
    await stores.circuitBreaker.subscribed;
    const plugin = core.RetryReflectPlugin.create({
      idempotency: { store: stores.idempotency },
      circuitBreakerStore: stores.circuitBreaker,
    });
    const first = await plugin.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool);
    if (first.status !== "success") throw new Error(`success path (${connection.kind}): the first call ended ${first.status}`);
    contestants.push([
      redisContestant(connection.kind),
      () => plugin.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool),
    ]);
  }
  await admin.command(["CONFIG", "RESETSTAT"]);
  const timings = await compare(contestants, { rounds: SUCCESS_ROUNDS });
  const allocations = new Map<string, number>();
  for (const [name, fn] of contestants) allocations.set(name, await allocatedPerCall(fn));
  for (const connection of connections) await connection.ping();
  const { evalsha, eval: evals } = await scriptCalls(admin);
  const memoryTiming = timings.find((timing) => timing.name === MEMORY)!;
  const ratios = new Map<ClientKind, number>();
  const roundRatios = new Map<ClientKind, number[]>();
  for (const connection of connections) {
    const timing = timings.find((candidate) => candidate.name === redisContestant(connection.kind))!;
    const perRound = timing.roundAvgNs.map((avg, round) => avg / (memoryTiming.roundAvgNs[round] as number));
    roundRatios.set(connection.kind, perRound);
    ratios.set(connection.kind, median(perRound));
  }
  return { timings, allocations, ratios, roundRatios, scriptsDuring: evalsha + evals };
}

// ---------------------------------------------------------------------------------------------
// 4. The dead tool called by 50 replicas: child processes, each hosting a few replicas (a plugin with its own client each)
