import { type NodeRedisConnection, nodeRedisSubscriber } from "./node-redis-transport.js";
import type { Transport } from "./transport.js";

/**
 * node-redis v5 `createCluster(...)` (RedisClusterType), as far as this layer uses it: commands are
 * sent with their first key, which picks the node of its slot.
 */
export interface NodeRedisClusterLike extends NodeRedisConnection {
  readonly isOpen: boolean;
  readonly masters: readonly unknown[];
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
    options?: { abortSignal?: AbortSignal; typeMapping?: Record<number, unknown> },
  ): Promise<unknown>;
  duplicate(): NodeRedisClusterLike;
}

/** The key a command is routed by: a script's first key (every script here has exactly one). */
export function firstKeyOf(args: readonly string[]): string | undefined {
  const command = args[0];
  if ((command === "EVALSHA" || command === "EVAL") && Number(args[2]) > 0) return args[3];
  // PUBLISH and SUBSCRIBE reach every node of a cluster; CONFIG GET asks any one node.
  return undefined;
}

/** Drives a node-redis cluster through `sendCommand`, each script to the node of its key. */
export function nodeRedisClusterTransport(client: NodeRedisClusterLike): Transport {
  const options = { typeMapping: {} };
  return {
    kind: "node-redis",
    usesSignal: true,
    notReady() {
      if (!client.isOpen)
        return "the node-redis cluster client is not open (call `await cluster.connect()` before using it, or it was closed)";
      return undefined;
    },
    send(args, signal) {
      return client.sendCommand(firstKeyOf(args), false, args, signal ? { ...options, abortSignal: signal } : options);
    },
    subscriber(onLost) {
      const connection = client.duplicate();
      return nodeRedisSubscriber(connection, onLost, () => connection.isOpen);
    },
  };
}
