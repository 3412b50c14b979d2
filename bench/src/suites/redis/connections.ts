// The suite's clients (node-redis and ioredis behind one shape) and the server's script counts.
import type { ClientKind } from "./parameters.js";

export interface Connection {
  readonly kind: ClientKind;
  /** What the stores are given. */
  readonly client: unknown;
  ping(): Promise<unknown>;
  command(args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

/** A connected client, offline queue off. */
export async function connectClient(kind: ClientKind, url: string): Promise<Connection> {
  if (kind === "node-redis") {
    const { createClient } = await import("redis");
    const client = createClient({
      url,
      disableOfflineQueue: true,
      socket: { reconnectStrategy: (retries: number) => Math.min(retries * 50, 1000) },
    });
    client.on("error", () => {});
    await client.connect();
    return {
      kind,
      client,
      ping: () => client.ping(),
      command: (args) => client.sendCommand(args),
      close: () => client.close(),
    };
  }
  const { Redis } = await import("ioredis");
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
  client.on("error", () => {});
  await client.connect();
  return {
    kind,
    client,
    ping: () => client.ping(),
    command: ([name, ...args]) => client.call(name as string, ...args),
    close: async () => {
      await client.quit();
    },
  };
}

/**
 * Calls of EVALSHA and EVAL the server counted since the last CONFIG RESETSTAT (every script call
 * is one of them), of WAIT (the `replicas` setting's round trips), and the server's mean time per
 * EVALSHA (`usec_per_call`, the script's run on the server alone).
 */
export async function scriptCalls(admin: Connection): Promise<{ evalsha: number; eval: number; wait: number; evalshaServerUs: number }> {
  const info = String(await admin.command(["INFO", "commandstats"]));
  const field = (name: string, key: string) => Number(new RegExp(`cmdstat_${name}:[^\\r\\n]*?\\b${key}=([\\d.]+)`).exec(info)?.[1] ?? 0);
  return {
    evalsha: field("evalsha", "calls"),
    eval: field("eval", "calls"),
    wait: field("wait", "calls"),
    evalshaServerUs: field("evalsha", "usec_per_call"),
  };
}
