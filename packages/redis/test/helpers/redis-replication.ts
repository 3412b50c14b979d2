// A primary and one replica for the failover tests: two startRedis() servers, the second made a
// replica of the first (REPLICAOF), ready once the replica's link is up and it acknowledges a
// write. `failover()` is what an operator or a Sentinel does when the primary dies: the primary is
// killed, the replica promoted (`REPLICAOF NO ONE`); the tests then point new clients at `replica.url`. Whatever the replica
// had not received when the primary died is lost, as in a real failover: pausing the replica
// (SIGSTOP) while writes complete on the primary makes that window as long as a test needs.
import { type RedisServer, startRedis } from "./redis-server.js";

export interface Replication {
  readonly primary: RedisServer;
  readonly replica: RedisServer;
  /** Kills the primary (a paused replica is resumed first), promotes the replica and waits until it takes writes. */
  failover(): Promise<void>;
  stop(): Promise<void>;
}

const LINK_UP_TIMEOUT_MS = 10_000;

/** Undefined without redis-server (as startRedis). */
export async function startReplication(): Promise<Replication | undefined> {
  // hz 500: a WAIT that times out (no replica acknowledged) holds its connection about its timeout
  // + 2 ms, not up to the default timer's 100 ms: the failover tests' writes that fail closed take
  // less time (measured: 3,000 writes cut a third of the way, 21.7 s at hz 100, 14.3 s at hz 500).
  // repl-diskless-sync no: the first sync through an RDB file (an empty one: the primary has no
  // data yet), after which the primary streams writes to its replica at once. A diskless sync
  // (Redis 7's default) waited 5 s for more replicas unless `repl-diskless-sync-delay 0`, and then
  // streamed nothing until the replica's first REPLCONF ACK, which it sends once a second: the first
  // WAIT was acknowledged 1 s after the link was up one time in two (measured: 12 replications in
  // a row, 0.22-0.28 s each to ready; before, 0.2-1.3 s).
  const primary = await startRedis({ args: ["--hz", "500", "--repl-diskless-sync", "no"] });
  if (primary === undefined) return undefined;
  // Made a replica by the REPLICAOF command once it answers, not started with `--replicaof`: the
  // command connects to the primary at once (the link was up 25-55 ms later), while a replica
  // started with the option connects at its first replication cron, up to a second after its start.
  const replica = await startRedis({ args: ["--hz", "500"] });
  if (replica === undefined) {
    await primary.stop();
    return undefined;
  }
  const replicaOf = await replica.command("REPLICAOF", "127.0.0.1", String(primary.port));
  if (!replicaOf.startsWith("+OK")) throw new Error(`redis-replication: REPLICAOF replied ${JSON.stringify(replicaOf)}`);
  await until(async () => (await replica.command("INFO", "replication")).includes("master_link_status:up"), "the replica's link up");
  // Right after its first sync a replica may take up to a second to acknowledge a write (measured:
  // a store's first begin with `replicas: { count: 1, timeoutMs: 500 }` failed closed one time in two):
  // ready once it acknowledges one.
  await until(
    async () => (await primary.commands(["SET", "ready", "1"], ["WAIT", "1", "100"])).endsWith(":1\r\n"),
    "the replica acknowledging a write",
  );
  return {
    primary,
    replica,
    async failover() {
      await primary.stop();
      replica.resume();
      await replica.command("REPLICAOF", "NO", "ONE");
      await until(async () => (await replica.command("INFO", "replication")).includes("role:master"), "the replica promoted");
    },
    async stop() {
      replica.resume();
      await Promise.all([primary.stop(), replica.stop()]);
    },
  };
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + LINK_UP_TIMEOUT_MS;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`redis-replication: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
