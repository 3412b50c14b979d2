import type { Subscriber, Transport } from "./transport.js";

/**
 * node-redis v5 `createClient(...)` (RedisClientType), as far as this layer uses it (checked against
 * the real type in test/client.test.ts).
 */
export interface NodeRedisLike extends NodeRedisConnection {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  sendCommand(args: string[], options?: { abortSignal?: AbortSignal; typeMapping?: Record<number, unknown> }): Promise<unknown>;
  duplicate(): NodeRedisLike;
}

/** Drives a node-redis client through `sendCommand`, whatever `typeMapping` it was configured with. */
export function nodeRedisTransport(client: NodeRedisLike): Transport {
  // `typeMapping: {}` on every command: the decoder's defaults (numbers, strings, arrays), whatever
  // typeMapping the user configured on the client (e.g. Buffers for strings, or numbers as strings,
  // which would make integers and strings look alike).
  const options = { typeMapping: {} };
  return {
    kind: "node-redis",
    usesSignal: true,
    notReady() {
      if (!client.isOpen) return "the node-redis client is not open (call `await client.connect()` before using it, or it was closed)";
      if (!client.isReady) return "the node-redis client is not ready (it is connecting or reconnecting)";
      return undefined;
    },
    send(args, signal) {
      return client.sendCommand(args, signal ? { ...options, abortSignal: signal } : options);
    },
    subscriber(onLost) {
      const connection = client.duplicate();
      return { ...nodeRedisSubscriber(connection, onLost, () => connection.isReady), ping: () => connection.ping?.() ?? Promise.resolve() };
    },
  };
}

/** What a node-redis connection (a client's or a cluster's duplicate) needs to serve as a subscriber. */
export interface NodeRedisConnection {
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  destroy(): void;
  ping?(): Promise<unknown>;
  on(event: "error" | "end", listener: () => void): unknown;
}

/** A subscription connection over a node-redis duplicate; `onLost` hears each failure or end of it. */
export function nodeRedisSubscriber(connection: NodeRedisConnection, onLost: () => void, isReady: () => boolean): Subscriber {
  // Without a listener, an `error` event (a dropped connection) would be thrown.
  connection.on("error", onLost);
  connection.on("end", onLost);
  return {
    connect: () => connection.connect(),
    subscribe: (channel, onMessage) => connection.subscribe(channel, (message) => onMessage(message)),
    unsubscribe: (channel) => connection.unsubscribe(channel),
    close: () => connection.destroy(),
    isReady,
  };
}
