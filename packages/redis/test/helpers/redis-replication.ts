// A primary and one replica for the failover tests: two startRedis() servers, the second started
// with `--replicaof`, ready once the replica's link is up. `failover()` is what an operator or a
// Sentinel does when the primary dies: the primary is killed, the replica promoted
// (`REPLICAOF NO ONE`); the tests then point new clients at `replica.url`. Whatever the replica
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
  // repl-diskless-sync-delay 0: the primary sends its replica the first sync at once, not after the
  // default 5 s wait for more replicas (a replication took 5.4 s to be up).
  const primary = await startRedis({ args: ["--hz", "500", "--repl-diskless-sync-delay", "0"] });
  if (primary === undefined) return undefined;
  const replica = await startRedis({ args: ["--hz", "500", "--replicaof", "127.0.0.1", String(primary.port)] });
  if (replica === undefined) {
    await primary.stop();
    return undefined;
  }
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
