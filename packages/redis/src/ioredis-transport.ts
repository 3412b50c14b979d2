import { ignore } from "./ignore.js";
import type { Transport } from "./transport.js";

/**
 * An ioredis v5/v6 `new Redis(...)` instance, as far as this layer uses it (checked against the real
 * type in test/client.test.ts).
 */
export interface IoRedisLike {
  readonly status: string;
  readonly options: { readonly stringNumbers?: boolean | undefined };
  call(command: string, ...args: string[]): Promise<unknown>;
  duplicate(override?: { lazyConnect?: boolean }): IoRedisLike;
  /** An ioredis `Cluster` says so. */
  readonly isCluster?: boolean;
  connect(): Promise<void>;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  disconnect(): void;
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "close", listener: () => void): unknown;
}

/** An ioredis `Cluster`, as far as this layer uses it: `call` routes each command to the node of its key. */
export interface IoRedisClusterLike extends Omit<IoRedisLike, "duplicate" | "options"> {
  readonly isCluster: true;
  readonly options: { readonly redisOptions?: { readonly stringNumbers?: boolean | undefined } };
  duplicate(startupNodes?: unknown[], override?: { lazyConnect?: boolean }): IoRedisClusterLike;
}

/** Drives an ioredis instance (or, `cluster`, an ioredis `Cluster`) through `call`. */
export function ioredisTransport(client: IoRedisLike | IoRedisClusterLike): Transport {
  return {
    kind: "ioredis",
    usesSignal: false,
    notReady() {
      const { status } = client;
      if (status === "ready") return undefined;
      if (status === "wait") return 'the ioredis client is not connected (status "wait", lazyConnect: call `await redis.connect()` first)';
      if (status === "end") return 'the ioredis client is closed (status "end")';
      return `the ioredis client is not ready (status "${status}")`;
    },
    // Lower-case names: ioredis looks commands up by name (key positions for keyPrefix, flags).
    send: (args) => client.call((args[0] as string).toLowerCase(), ...args.slice(1)),
    subscriber(onLost) {
      // lazyConnect: connected below, so that connecting is bounded and its failure is seen.
      // A Cluster's duplicate takes its startup nodes first (none: the same as the original's).
      const connection =
        client.isCluster === true
          ? (client as IoRedisClusterLike).duplicate([], { lazyConnect: true })
          : (client as IoRedisLike).duplicate({ lazyConnect: true });
      connection.on("error", ignore);
      connection.on("close", onLost);
      return {
        connect: () => connection.connect(),
        subscribe(channel, onMessage) {
          connection.on("message", (from, message) => {
            if (from === channel) onMessage(message);
          });
          return connection.subscribe(channel);
        },
        unsubscribe: (channel) => connection.unsubscribe(channel),
        close: () => connection.disconnect(),
        isReady: () => connection.status === "ready",
        // A Cluster's PING goes to some node, not to the subscribed connection.
        ping: client.isCluster === true ? undefined : () => connection.call("ping"),
      };
    },
  };
}
