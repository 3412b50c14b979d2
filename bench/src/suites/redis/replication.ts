// A replica for the `replicas: { count: 1 }` rows: a second redis-server of the bench's own kind,
// told `REPLICAOF` the suite's server, ready once its link to the primary is up and the primary
// counts it. Undefined (the rows are then not measured) when it cannot start or link within 10 s.
import { type RedisServer, startRedisServer } from "../../redis-server.js";
import { connectClient } from "./connections.js";

/** How long the replica may take to start and finish its first sync with an almost empty primary. */
const LINK_TIMEOUT_MS = 10_000;

export async function startReplicaOf(primary: RedisServer, binary: string | undefined): Promise<RedisServer | undefined> {
  const replica = await startRedisServer(binary);
  if (replica === undefined) return undefined;
  const replicaAdmin = await connectClient("node-redis", replica.url);
  const primaryAdmin = await connectClient("node-redis", primary.url);
  try {
    await replicaAdmin.command(["REPLICAOF", "127.0.0.1", String(primary.port)]);
    const deadline = Date.now() + LINK_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const linked = /master_link_status:up/.test(String(await replicaAdmin.command(["INFO", "replication"])));
      const counted = /connected_slaves:1\b/.test(String(await primaryAdmin.command(["INFO", "replication"])));
      if (linked && counted) return replica;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await replicaAdmin.close().catch(() => undefined);
    await primaryAdmin.close().catch(() => undefined);
  }
  await replica.stop();
  return undefined;
}
