import { classifyError, isNoScript, messageOf } from "./classify-error.js";
import { describeValue } from "./describe-value.js";
import { ignore } from "./ignore.js";
import { isObject } from "./is-object.js";
import type { Script } from "./lua-script.js";
import { configValue, normaliseReply } from "./normalise-reply.js";
import { RedisTimeoutError, RedisUnavailableError } from "./redis-errors.js";

// One small layer over node-redis v5 and ioredis v5/v6, so that the stores never care which client
// the user passed. Neither package is imported: both are optional peers, so the clients are
// recognised by duck typing and driven through raw commands (`sendCommand` / `call`), the part of
// their APIs that has stayed the same across versions. test/client.test.ts checks, at compile time,
// that the real clients fit the shapes below.

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
   * unhandled errors; it reconnects and resubscribes as the client's own options say.
   * `onMessage` must not throw (a throw is caught and reported with `process.emitWarning`).
   */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
  /** CONFIG GET maxmemory-policy; undefined when the server refuses CONFIG (managed Redis) or on any error. */
  maxmemoryPolicy(): Promise<string | undefined>;
}

// ---------------------------------------------------------------------------------------------
// The parts of each client used here (checked against the real types in test/client.test.ts).

/** node-redis v5 `createClient(...)` (RedisClientType), as far as this layer uses it. */
export interface NodeRedisLike {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  sendCommand(args: string[], options?: { abortSignal?: AbortSignal; typeMapping?: Record<number, unknown> }): Promise<unknown>;
  duplicate(): NodeRedisLike;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  destroy(): void;
  on(event: "error", listener: (error: Error) => void): unknown;
}

/** An ioredis v5/v6 `new Redis(...)` instance, as far as this layer uses it. */
export interface IoRedisLike {
  readonly status: string;
  readonly options: { readonly stringNumbers?: boolean | undefined };
  call(command: string, ...args: string[]): Promise<unknown>;
  duplicate(override?: { lazyConnect?: boolean }): IoRedisLike;
  connect(): Promise<void>;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  disconnect(): void;
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
}

/** What the shared logic needs from a client. Commands are upper case; each transport adapts. */
interface Transport {
  readonly kind: ScriptClient["kind"];
  /** Why a command cannot be sent now, or undefined when the client is ready. */
  notReady(): string | undefined;
  /** `signal` aborts when the command times out (node-redis then drops it if not yet written). */
  send(args: string[], signal: AbortSignal | undefined): Promise<unknown>;
  /** Whether `send` uses `signal`; when not, no AbortController is made per command. */
  readonly usesSignal: boolean;
  /** A new connection (a duplicate of the client), not connected yet. */
  subscriber(): Subscriber;
}

interface Subscriber {
  /** Resolves once the connection is ready. */
  connect(): Promise<unknown>;
  subscribe(channel: string, onMessage: (message: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  /** Closes the connection at once (pending commands are dropped). */
  close(): void;
  isReady(): boolean;
}

function nodeRedisTransport(client: NodeRedisLike): Transport {
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
    subscriber() {
      const connection = client.duplicate();
      // Without a listener, an `error` event (a dropped connection) would be thrown.
      connection.on("error", ignore);
      return {
        connect: () => connection.connect(),
        subscribe: (channel, onMessage) => connection.subscribe(channel, (message) => onMessage(message)),
        unsubscribe: (channel) => connection.unsubscribe(channel),
        close: () => connection.destroy(),
        isReady: () => connection.isReady,
      };
    },
  };
}

function ioredisTransport(client: IoRedisLike): Transport {
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
    subscriber() {
      // lazyConnect: connected below, so that connecting is bounded and its failure is seen.
      const connection = client.duplicate({ lazyConnect: true });
      connection.on("error", ignore);
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
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Detection

function isIoRedis(value: Record<string, unknown>): boolean {
  return (
    typeof value.status === "string" &&
    typeof value.call === "function" &&
    typeof value.duplicate === "function" &&
    typeof value.connect === "function" &&
    typeof value.subscribe === "function" &&
    typeof value.disconnect === "function" &&
    isObject(value.options) &&
    value.isCluster !== true
  );
}

function isNodeRedis(value: Record<string, unknown>): boolean {
  return (
    typeof value.sendCommand === "function" &&
    typeof value.duplicate === "function" &&
    typeof value.connect === "function" &&
    typeof value.subscribe === "function" &&
    typeof value.destroy === "function" &&
    typeof value.isOpen === "boolean" &&
    typeof value.isReady === "boolean"
  );
}

const MAX_TIMER_MS = 2_147_483_647;
const SUBSCRIBE_FLOOR_MS = 2_000;

/**
 * Detects a connected node-redis v5 client (`createClient(...)`) or an ioredis v5/v6 instance
 * (`new Redis(...)`) by duck typing; neither package is loaded here. Throws a TypeError naming
 * `client` and describing what was given otherwise (a cluster, a pool, a Promise, ...), and a
 * RangeError for a `commandTimeoutMs` that is not a positive number of milliseconds.
 * ioredis with `stringNumbers: true` is refused: its integers would come back as strings.
 */
export function scriptClient(client: unknown, commandTimeoutMs: number): ScriptClient {
  if (typeof commandTimeoutMs !== "number" || !(commandTimeoutMs > 0) || commandTimeoutMs > MAX_TIMER_MS) {
    throw new RangeError(
      `scriptClient: \`commandTimeoutMs\` must be a number of milliseconds above 0 and at most ${MAX_TIMER_MS}; got ${describeValue(commandTimeoutMs)}`,
    );
  }
  const expected = "a connected node-redis v5 client (createClient(...)) or an ioredis v5/v6 instance (new Redis(...))";
  if (isObject(client) && isIoRedis(client)) {
    if ((client as unknown as IoRedisLike).options.stringNumbers === true) {
      throw new TypeError(
        "scriptClient: `client` is an ioredis instance with `stringNumbers: true`, which is not supported: script replies would turn integers into strings. Pass a client without it (e.g. `redis.duplicate({ stringNumbers: false })`).",
      );
    }
    return new RedisScriptClient(ioredisTransport(client as unknown as IoRedisLike), commandTimeoutMs);
  }
  if (isObject(client) && isNodeRedis(client)) {
    return new RedisScriptClient(nodeRedisTransport(client as unknown as NodeRedisLike), commandTimeoutMs);
  }
  throw new TypeError(`scriptClient: \`client\` must be ${expected}; got ${describeValue(client)}`);
}

// ---------------------------------------------------------------------------------------------
// Errors and replies

function commandArg(value: unknown, what: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new TypeError(`ScriptClient.run: ${what} must be a string or a finite number; got ${describeValue(value)}`);
}

// ---------------------------------------------------------------------------------------------

type Step = (command: string, args: string[]) => Promise<unknown>;

const CANCELLED = Symbol("cancelled");

class RedisScriptClient implements ScriptClient {
  readonly kind: ScriptClient["kind"];
  readonly #transport: Transport;
  readonly #timeoutMs: number;

  constructor(transport: Transport, timeoutMs: number) {
    this.kind = transport.kind;
    this.#transport = transport;
    this.#timeoutMs = timeoutMs;
  }

  run(script: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    let tail: string[];
    try {
      if (!isObject(script) || typeof script.sha !== "string" || typeof script.source !== "string") {
        throw new TypeError(`ScriptClient.run: \`script\` must come from script(source); got ${describeValue(script)}`);
      }
      if (!Array.isArray(keys) || !Array.isArray(args)) throw new TypeError("ScriptClient.run: `keys` and `args` must be arrays");
      tail = [String(keys.length)];
      for (const key of keys) {
        if (typeof key !== "string") throw new TypeError(`ScriptClient.run: every key must be a string; got ${describeValue(key)}`);
        tail.push(key);
      }
      for (const arg of args) tail.push(commandArg(arg, "every argument"));
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#bounded("EVALSHA", this.#timeoutMs, async (step) => {
      try {
        return normaliseReply(await step("EVALSHA", ["EVALSHA", script.sha, ...tail]));
      } catch (error) {
        // NOSCRIPT: the server does not have the script (SCRIPT FLUSH, a restart, a new replica).
        // EVAL runs it and caches it, so the next EVALSHA finds it.
        if (!isNoScript(error)) throw error;
        return normaliseReply(await step("EVAL", ["EVAL", script.source, ...tail]));
      }
    });
  }

  async publish(channel: string, message: string): Promise<void> {
    if (typeof channel !== "string" || typeof message !== "string") {
      throw new TypeError("ScriptClient.publish: `channel` and `message` must be strings");
    }
    await this.#bounded("PUBLISH", this.#timeoutMs, (step) => step("PUBLISH", ["PUBLISH", channel, message]));
  }

  async maxmemoryPolicy(): Promise<string | undefined> {
    try {
      const reply = await this.#bounded("CONFIG GET", this.#timeoutMs, (step) => step("CONFIG GET", ["CONFIG", "GET", "maxmemory-policy"]));
      return configValue(reply, "maxmemory-policy");
    } catch {
      return undefined;
    }
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>> {
    if (typeof channel !== "string" || typeof onMessage !== "function") {
      throw new TypeError("ScriptClient.subscribe: `channel` must be a string and `onMessage` a function");
    }
    const reason = this.#transport.notReady();
    if (reason !== undefined) throw new RedisUnavailableError("SUBSCRIBE", reason);
    let closed = false;
    const deliver = (message: string): void => {
      if (closed) return;
      try {
        onMessage(message);
      } catch (error) {
        // Thrown inside the client's reply parser, it would break the subscription connection.
        process.emitWarning(`retry-reflect redis: a subscriber of "${channel}" threw: ${messageOf(error)}`, "RetryReflectWarning");
      }
    };
    const subscriber = this.#transport.subscriber();
    const close = (): void => {
      try {
        subscriber.close();
      } catch {
        // already closed
      }
    };
    const limit = Math.max(this.#timeoutMs, SUBSCRIBE_FLOOR_MS);
    try {
      await this.#bounded("SUBSCRIBE", limit, async () => {
        let command = "connect";
        try {
          await subscriber.connect();
          if (closed) return; // the limit passed while connecting: the connection is closed already
          command = "SUBSCRIBE";
          await subscriber.subscribe(channel, deliver);
        } catch (error) {
          throw classifyError(command === "connect" ? "SUBSCRIBE" : command, error, limit);
        }
      });
    } catch (error) {
      closed = true;
      close();
      throw error;
    }
    let closing: Promise<void> | undefined;
    return () => {
      closing ??= (async () => {
        closed = true;
        if (subscriber.isReady()) {
          // Bounded, and its failure does not matter: closing the connection unsubscribes too.
          await this.#bounded("UNSUBSCRIBE", this.#timeoutMs, () => subscriber.unsubscribe(channel)).catch(ignore);
        }
        close();
      })();
      return closing;
    };
  }

  /**
   * Runs `body` under one time limit. Each `step` checks that the client is ready (else a
   * RedisUnavailableError, at once) and sends one command; its failures are classified. A late
   * reply or error, after the limit, is dropped (it never becomes an unhandled rejection).
   */
  #bounded<T>(first: string, timeoutMs: number, body: (step: Step) => Promise<T>): Promise<T> {
    const transport = this.#transport;
    const reason = transport.notReady();
    if (reason !== undefined) return Promise.reject(new RedisUnavailableError(first, reason));
    return new Promise<T>((resolve, reject) => {
      let command = first;
      let done = false;
      const controller = transport.usesSignal ? new AbortController() : undefined;
      const timer = setTimeout(() => {
        if (done) return;
        done = true;
        controller?.abort();
        reject(new RedisTimeoutError(command, timeoutMs));
      }, timeoutMs);
      timer.unref();
      const step: Step = async (name, args) => {
        command = name;
        if (done) throw CANCELLED;
        const notReady = transport.notReady();
        if (notReady !== undefined) throw new RedisUnavailableError(name, notReady);
        try {
          return await transport.send(args, controller?.signal);
        } catch (error) {
          throw classifyError(name, error, timeoutMs);
        }
      };
      let started: Promise<T>;
      try {
        started = body(step);
      } catch (error) {
        started = Promise.reject(error);
      }
      started.then(
        (value) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}
