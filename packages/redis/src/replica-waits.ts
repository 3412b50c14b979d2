import { LOCK_HELD, READ_LOCK, STORE_RESULT } from "./idempotency-scripts.js";
import { type Script, script } from "./lua-script.js";
import type { ReplicasOption } from "./options.js";
import { RedisTimeoutError, RedisUnavailableError } from "./redis-errors.js";
import type { ScriptClient } from "./script-client.js";

// With the `replicas` option, a lock or a result counts only once replicas have it: a failover
// to a replica that lacks a running write's lock would let a second process run that write, and
// one that lacks a completed key would run it again.

/** Fewer replicas than `replicas.count` acknowledged a write in time. */
export class RedisReplicasError extends Error {
  readonly acknowledged: number;
  constructor(what: string, acknowledged: number, option: ReplicasOption) {
    super(`Redis WAIT: ${acknowledged} of ${option.count} replicas acknowledged the ${what} within ${option.timeoutMs} ms`);
    this.name = "RedisReplicasError";
    this.acknowledged = acknowledged;
  }
}

/**
 * complete again (token, value, ttlMs) → 1 when the key is held (also in doubt past its lease) or
 * completed by the token (the result written again, so that a WAIT on a new connection covers
 * it), else 0.
 */
const COMPLETE_AGAIN: Script = script(`${READ_LOCK}if rec[2] ~= ARGV[1] then return 0 end
if rec[1] ~= 'done' and not ${LOCK_HELD} then return 0 end
${STORE_RESULT}`);

/** A pause between tries of a completion whose WAIT could not be sent (the client reconnecting). */
const RETRY_PAUSE_MS = 20;

export class ReplicaWaits {
  readonly #redis: ScriptClient;
  readonly #option: ReplicasOption;
  readonly #send: (count: number, timeoutMs: number) => Promise<number>;

  constructor(redis: ScriptClient, option: ReplicasOption) {
    if (typeof redis.waitForReplicas !== "function") throw new TypeError("replicas: this client layer cannot send WAIT");
    this.#send = redis.waitForReplicas.bind(redis);
    this.#redis = redis;
    this.#option = option;
  }

  /** Resolves once `count` replicas have the lock just taken; rejects otherwise (the write must not run). */
  async lockReplicated(): Promise<void> {
    const acknowledged = await this.#wait();
    if (acknowledged < this.#option.count) throw new RedisReplicasError("lock", acknowledged, this.#option);
  }

  /**
   * After a completion: true once `count` replicas have it, false when the key was lost meanwhile.
   * Tried again (the result written again, then WAIT) until `deadline` (performance.now()), the
   * end of the write's lease, after which another process may run the write: then it rejects.
   */
  async resultReplicated(redisKey: string, args: readonly (string | number)[], deadline: number): Promise<boolean> {
    let acknowledged = 0;
    for (let first = true; ; first = false) {
      try {
        if (!first && (await this.#redis.run(COMPLETE_AGAIN, [redisKey], args)) !== 1) return false;
        acknowledged = await this.#wait();
        if (acknowledged >= this.#option.count) return true;
      } catch (error) {
        // Silence or a lost connection: tried again within the lease; an error reply is an answer.
        if (!RedisTimeoutError.isInstance(error) && !RedisUnavailableError.isInstance(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS).unref());
      }
      if (performance.now() >= deadline) throw new RedisReplicasError("result", acknowledged, this.#option);
    }
  }

  #wait(): Promise<number> {
    return this.#send(this.#option.count, this.#option.timeoutMs);
  }
}
