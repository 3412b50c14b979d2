import type { ScriptClient } from "./script-client.js";

/** What the shared logic needs from a client. Commands are upper case; each transport adapts. */
export interface Transport {
  readonly kind: ScriptClient["kind"];
  /** Why a command cannot be sent now, or undefined when the client is ready. */
  notReady(): string | undefined;
  /** `signal` aborts when the command times out (node-redis then drops it if not yet written). */
  send(args: string[], signal: AbortSignal | undefined): Promise<unknown>;
  /** Whether `send` uses `signal`; when not, no AbortController is made per command. */
  readonly usesSignal: boolean;
  /** A new connection (a duplicate of the client), not connected yet; `onLost` hears each failure or close of it. */
  subscriber(onLost: () => void): Subscriber;
}

/** One subscription connection, made by {@link Transport.subscriber}. */
export interface Subscriber {
  /** Resolves once the connection is ready. */
  connect(): Promise<unknown>;
  subscribe(channel: string, onMessage: (message: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  /** Closes the connection at once (pending commands are dropped). */
  close(): void;
  isReady(): boolean;
  /**
   * A PING on this very connection (allowed while subscribed), so that a connection lost without a
   * close (a NAT or load balancer dropping an idle one) is noticed. Absent for cluster clients,
   * whose PING would go to some node, not to the subscribed connection.
   */
  readonly ping?: () => Promise<unknown>;
}
