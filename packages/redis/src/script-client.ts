import type { Script } from "./lua-script.js";

// One small layer over node-redis v5/v6 and ioredis v5/v6, so that the stores never care which client
// the user passed. Neither package is imported: both are optional peers, so the clients are
// recognised by duck typing and driven through raw commands (`sendCommand` / `call`), the part of
// their APIs that has stayed the same across versions. test/client.test.ts checks, at compile time,
// that the real clients fit the shapes used here (NodeRedisLike, IoRedisLike).

/**
 * A reply of a Lua script, the same from both clients: integers are numbers, strings are strings,
 * nil (and Lua `false`) is `null`, tables are arrays of these.
 */
export type ScriptReply = number | string | null | ScriptReply[];

export interface ScriptClient {
  readonly kind: "node-redis" | "ioredis";
  /**
   * EVALSHA, falling back to EVAL on a NOSCRIPT error (after SCRIPT FLUSH or on a new server).
   * Rejects after the command timeout (a {@link RedisTimeoutError}; the one limit covers EVALSHA and
   * the EVAL after it), and at once (a {@link RedisUnavailableError}) when the client is not
   * connected/ready, so nothing waits in an offline queue or for client reconnects. An error reply
   * from Redis (a script error, BUSY, OOM...) is passed through as the client raised it; any other
   * failure of the client (connection lost, ...) becomes a {@link RedisUnavailableError}.
   * Resolves with the reply normalised (see {@link ScriptReply}). The timer is cleared when the
   * command settles and never holds the process open.
   */
  run(script: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /** PUBLISH, same timeout, readiness and error rules as {@link run}. */
  publish(channel: string, message: string): Promise<void>;
  /**
   * Subscribes on a duplicate connection (made and connected here); resolves once subscribed. The
   * returned function unsubscribes and closes that connection (it never rejects, and may be called
   * more than once). Rejects at once (a {@link RedisUnavailableError}) when the client is not
   * ready, and after `max(commandTimeoutMs, 2000)` ms (a {@link RedisTimeoutError}) when the new
   * connection is not subscribed by then: opening a connection may take longer than one command.
   * On any failure the new connection is closed. A dropped subscription connection never raises
   * unhandled errors; `onLost` is called once, at its first error or close (not after the returned
   * function closed it): the caller then closes it and subscribes again (messages published
   * meanwhile are missed). `onMessage` must not throw (a throw is caught and reported with
   * `process.emitWarning`).
   */
  subscribe(channel: string, onMessage: (message: string) => void, onLost?: () => void): Promise<() => Promise<void>>;
  /**
   * WAIT count timeoutMs on the connection the scripts use: resolves with how many replicas
   * acknowledged every write sent on it so far. Bounded by the command timeout plus `timeoutMs`
   * (Redis itself answers after `timeoutMs`); same readiness and error rules as {@link run}.
   * Optional so that test doubles need not have it; the clients made by `scriptClient` do.
   */
  waitForReplicas?(count: number, timeoutMs: number): Promise<number>;
  /** CONFIG GET maxmemory-policy; undefined when the server refuses CONFIG (managed Redis) or on any error. */
  maxmemoryPolicy(): Promise<string | undefined>;
}
