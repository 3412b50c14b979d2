import { classifyError, isNoScript, messageOf } from "./classify-error.js";
import { describeValue } from "./describe-value.js";
import { ignore } from "./ignore.js";
import { isObject } from "./is-object.js";
import type { Script } from "./lua-script.js";
import { configValue, normaliseReply } from "./normalise-reply.js";
import { RedisTimeoutError, RedisUnavailableError } from "./redis-errors.js";
import type { ScriptClient } from "./script-client.js";
import type { Transport } from "./transport.js";

const SUBSCRIBE_FLOOR_MS = 2_000;
/** How often a held subscription's connection is pinged by default (`subscriptionPingMs`). */
export const SUBSCRIPTION_PING_MS = 10_000;
/**
 * CONFIG GET runs once per client, off any tool call's path: a busy server or machine answering in
 * more than the command limit (100 ms by default) must not silence the eviction warning.
 */
const DIAGNOSTIC_FLOOR_MS = 2_000;

function commandArg(value: unknown, what: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new TypeError(`ScriptClient.run: ${what} must be a string or a finite number; got ${describeValue(value)}`);
}

type Step = (command: string, args: string[]) => Promise<unknown>;

const CANCELLED = Symbol("cancelled");

/**
 * The {@link ScriptClient} over either client's {@link Transport}: every command under one time
 * limit, EVALSHA falling back to EVAL, subscriptions on their own connection. Made by `scriptClient`.
 */
export class RedisScriptClient implements ScriptClient {
  readonly kind: ScriptClient["kind"];
  readonly #transport: Transport;
  readonly #timeoutMs: number;
  readonly #pingEveryMs: number;

  /** `pingEveryMs`: a subscription's connection is pinged this often (0: never); no reply within the subscribe limit is a loss. */
  constructor(transport: Transport, timeoutMs: number, pingEveryMs = SUBSCRIPTION_PING_MS) {
    this.kind = transport.kind;
    this.#transport = transport;
    this.#timeoutMs = timeoutMs;
    this.#pingEveryMs = pingEveryMs;
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

  async waitForReplicas(count: number, timeoutMs: number): Promise<number> {
    const reply = await this.#bounded("WAIT", this.#timeoutMs + timeoutMs, (step) =>
      step("WAIT", ["WAIT", commandArg(count, "count"), commandArg(timeoutMs, "timeoutMs")]),
    );
    const acknowledged = Number(reply);
    if (!Number.isSafeInteger(acknowledged)) throw new TypeError(`WAIT: unexpected reply from Redis: ${describeValue(reply)}`);
    return acknowledged;
  }

  async maxmemoryPolicy(): Promise<string | undefined> {
    try {
      const reply = await this.#bounded("CONFIG GET", Math.max(this.#timeoutMs, DIAGNOSTIC_FLOOR_MS), (step) =>
        step("CONFIG GET", ["CONFIG", "GET", "maxmemory-policy"]),
      );
      return configValue(reply, "maxmemory-policy");
    } catch {
      return undefined;
    }
  }

  async subscribe(channel: string, onMessage: (message: string) => void, onLost?: () => void): Promise<() => Promise<void>> {
    if (typeof channel !== "string" || typeof onMessage !== "function" || (onLost !== undefined && typeof onLost !== "function")) {
      throw new TypeError("ScriptClient.subscribe: `channel` must be a string, `onMessage` and `onLost` functions");
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
    let lost = false;
    let pinger: ReturnType<typeof setTimeout> | undefined;
    const loseIt = (): void => {
      // Once: the connection's close after an error is the same loss.
      if (closed || lost) return;
      lost = true;
      clearTimeout(pinger);
      onLost?.();
    };
    const subscriber = this.#transport.subscriber(loseIt);
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
    const { ping } = subscriber;
    if (ping !== undefined && this.#pingEveryMs > 0) {
      // A connection dropped without a close (an idle one cut by a NAT or load balancer) delivers
      // nothing and reports nothing: a PING with no reply within the limit ends it as lost.
      const beat = (): void => {
        pinger = setTimeout(() => {
          let answered = false;
          const silent = setTimeout(() => {
            if (answered || closed || lost) return;
            close();
            loseIt();
          }, limit);
          silent.unref();
          ping().then(
            () => {
              answered = true;
              clearTimeout(silent);
              if (!closed && !lost) beat();
            },
            () => {
              answered = true;
              clearTimeout(silent);
              if (!closed && !lost) {
                close();
                loseIt();
              }
            },
          );
        }, this.#pingEveryMs);
        pinger.unref();
      };
      beat();
    }
    let closing: Promise<void> | undefined;
    return () => {
      closing ??= (async () => {
        closed = true;
        clearTimeout(pinger);
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
