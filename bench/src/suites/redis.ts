// 8. Redis stores: the suite's entry. It starts its own redis-server, connects the clients, runs the
// four parts in order (round trips, latency, the healthy call, the dead-tool fleet; each in
// redis/) and stops everything it started, also when a part fails.
import { loadavg } from "node:os";
import { round } from "../format.js";
import { type CoreModule, PENDING } from "../ours.js";
import { startRedisServer } from "../redis-server.js";
import type { SuiteResult } from "../report-types.js";
import { type Connection, connectClient } from "./redis/connections.js";
import { deadToolFleet } from "./redis/dead-tool-fleet.js";
import { healthyCall } from "./redis/healthy-call.js";
import { latencies } from "./redis/latency.js";
import { measuredResult } from "./redis/measured-result.js";
import { METHOD } from "./redis/method.js";
import { KINDS, type RedisModule } from "./redis/parameters.js";
import { startReplicaOf } from "./redis/replication.js";
import { roundTrips } from "./redis/round-trips.js";
import { INSTALL_NOTE, NOT_MEASURED, unmeasuredResult } from "./redis/unmeasured-result.js";

/** Names another server binary (a build of Redis elsewhere, `valkey-server`); when set, only it is tried. */
const BINARY_VARIABLE = "BENCH_REDIS_SERVER";

/** 8. Redis stores: round trips, latency, the healthy call with a shared breaker, and a fleet calling a dead tool. */
export async function redis(core: CoreModule | undefined): Promise<SuiteResult> {
  if (core === undefined) return unmeasuredResult(METHOD, [], PENDING);
  const binary = process.env[BINARY_VARIABLE] || undefined;
  const server = await startRedisServer(binary);
  if (server === undefined) return unmeasuredResult(METHOD, [INSTALL_NOTE], `${NOT_MEASURED} (redis-server not installed)`);
  const redisModule: RedisModule = await import("@retry-reflect/redis");

  const cleanup: Array<() => Promise<void>> = [];
  cleanup.push(() => server.stop());
  try {
    // A replica of the server, for the rows with the stores' `replicas` setting (not measured without it).
    const replica = await startReplicaOf(server, binary);
    if (replica !== undefined) cleanup.push(() => replica.stop());
    const replicated = replica !== undefined;
    const admin = await connectClient("node-redis", server.url);
    cleanup.push(() => admin.close());
    const connections: Connection[] = [];
    for (const kind of KINDS) {
      const connection = await connectClient(kind, server.url);
      cleanup.push(() => connection.close());
      connections.push(connection);
    }
    const loadAtStart = loadavg()[0]!;
    const seconds: Record<string, number> = {};
    const timed = async <T>(part: string, run: () => Promise<T>): Promise<T> => {
      const began = Date.now();
      try {
        return await run();
      } finally {
        seconds[part] = round((Date.now() - began) / 1000, 1);
      }
    };

    const trips = await timed("round trips", () => roundTrips(core, redisModule, connections, admin, cleanup, replicated));
    const { rows: latency, evalshaServerUs } = await timed("latency", () =>
      latencies(core, redisModule, connections, admin, cleanup, replicated),
    );
    // One client is enough here: a closed circuit never touches it (the script count below proves it).
    const success = await timed("healthy call", () =>
      healthyCall(
        core,
        redisModule,
        connections.filter((connection) => connection.kind === "node-redis"),
        admin,
        cleanup,
      ),
    );
    const loadBeforeFleet = loadavg()[0]!;
    const fleet = await timed("fleet", () => deadToolFleet(server.url));
    const loadAtEnd = loadavg()[0]!;

    return measuredResult({
      server,
      replicated,
      trips,
      latency,
      evalshaServerUs,
      success,
      fleet,
      seconds,
      loadAtStart,
      loadBeforeFleet,
      loadAtEnd,
    });
  } finally {
    for (const close of cleanup.reverse()) await close().catch(() => undefined);
  }
}
