import { randomUUID } from "node:crypto";
import type { IdempotencyBeginResult, IdempotencyStore } from "@retry-reflect/core/stores";
import { BEGIN, beginArgs, COMPLETE, EXTEND, RELEASE, releaseOwnerArgs } from "./idempotency-scripts.js";
import { hashed } from "./key-names.js";
import { type RedisStoreOptions, resolveRedisOptions, warnOnEviction } from "./options.js";
import { mayStillRun, OwnerReleases } from "./owner-releases.js";
import { ReplicaWaits } from "./replica-waits.js";
import type { ScriptClient } from "./script-client.js";

/**
 * Idempotency keys in Redis, shared by every process that uses the same server and prefix: one Lua
 * script per operation (atomic, one key each), the server's clock, fencing tokens. A lock expires
 * with its lease, so a killed holder never blocks its key beyond it; with `replicas`, it is kept
 * `replicas.inDoubtMs` longer, in doubt (`begin` answers `in_doubt`: the write may have taken
 * effect, its result was lost), and only its holder may still complete or release it. Key names carry the prefix
 * and a SHA-256 of the key, never the key itself. A result is stored as JSON (`undefined` kept; a
 * value JSON cannot hold, such as a BigInt, is not stored: a `store_error`, the caller keeps it). A
 * stored result this store cannot read back (it does not parse, or is not its envelope: a tampered
 * or corrupted record) is answered `in_doubt` with `invalidRecord`: never replayed, never a fault.
 * Redis down or slow past `commandTimeoutMs`: `begin` rejects, so the write does not run
 * (`STORE_UNAVAILABLE`); when its request was sent, the lock it may still take when Redis answers
 * late is released (each begin carries an owner id of its own), tried again until Redis answers or
 * the lease ends. `close()` stops those releases.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly prefix: string;
  private readonly redis: ScriptClient;
  /** The releases of begins that got no reply (not private: tests wait for them). */
  readonly ownerReleases: OwnerReleases;
  /** With `replicas`: the WAITs, and when each held lock's lease ends (performance.now(), by token). */
  readonly #replicas: { waits: ReplicaWaits; leaseEnds: Map<string, number>; inDoubtMs: number } | undefined;

  constructor(options: RedisStoreOptions) {
    const resolved = resolveRedisOptions(options);
    this.redis = resolved.redis;
    this.prefix = resolved.prefix;
    this.ownerReleases = new OwnerReleases(this.redis, { script: BEGIN, args: releaseOwnerArgs });
    if (resolved.replicas) {
      const { replicas } = resolved;
      this.#replicas = {
        waits: new ReplicaWaits(this.redis, replicas),
        leaseEnds: new Map(),
        inDoubtMs: replicas.inDoubtMs,
      };
    }
    warnOnEviction(this.redis, options.client);
  }

  /** The Redis key of an idempotency key: the prefix and a hash (the hash tag keeps each key in one cluster slot). */
  keyOf(key: string): string {
    return `${this.prefix}idem:{${hashed(key)}}`;
  }

  async begin(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyBeginResult> {
    const redisKey = this.keyOf(key);
    const lease = Math.max(1, Math.ceil(leaseMs));
    const owner = randomUUID();
    let reply: unknown;
    try {
      reply = await this.redis.run(BEGIN, [redisKey], beginArgs(fingerprint, lease, owner, this.#replicas?.inDoubtMs ?? 0));
    } catch (error) {
      // The caller hears that the write did not run: a lock taken by a late reply must not hold the key.
      if (mayStillRun(error)) this.ownerReleases.release(redisKey, owner, lease);
      throw error;
    }
    if (!Array.isArray(reply)) throw new TypeError(`begin: unexpected reply from Redis: ${typeof reply}`);
    switch (reply[0]) {
      case "acquired":
        return { status: "acquired", token: await this.#replicated(redisKey, owner, lease, String(reply[1])) };
      case "completed": {
        const record = decode(reply[2]);
        // A record this store did not write (tampered, or corrupted): never replayed, reported as such (not as a fault).
        if ("problem" in record) return { status: "in_doubt", fingerprint: String(reply[1]), invalidRecord: record.problem };
        return { status: "completed", fingerprint: String(reply[1]), value: record.value };
      }
      case "in_progress":
        return { status: "in_progress", fingerprint: String(reply[1]), retryAfterMs: Number(reply[2]) };
      case "in_doubt":
        return { status: "in_doubt", fingerprint: String(reply[1]) };
      case "abandoned":
        // Only a begin that reached Redis after its own release gets this, and its caller is gone.
        throw new Error("begin: this request was released after it got no reply in time");
      default:
        throw new TypeError(`begin: unexpected reply from Redis: ${JSON.stringify(reply).slice(0, 80)}`);
    }
  }

  /** With `replicas`: the token once replicas have the lock; else the lock is released and the write does not run. */
  async #replicated(redisKey: string, owner: string, lease: number, token: string): Promise<string> {
    if (this.#replicas === undefined) return token;
    try {
      await this.#replicas.waits.lockReplicated();
    } catch (error) {
      this.ownerReleases.release(redisKey, owner, lease);
      throw error;
    }
    const { leaseEnds } = this.#replicas;
    if (leaseEnds.size >= MAX_LEASES_KEPT) dropEnded(leaseEnds);
    leaseEnds.set(token, performance.now() + lease);
    return token;
  }

  async complete(key: string, token: string, value: unknown, ttlMs: number): Promise<boolean> {
    const redisKey = this.keyOf(key);
    const args = [token, encode(value), Math.max(1, Math.ceil(ttlMs))];
    const held = (await this.redis.run(COMPLETE, [redisKey], args)) === 1;
    if (this.#replicas === undefined) return held;
    const leaseEnd = this.#replicas.leaseEnds.get(token);
    this.#replicas.leaseEnds.delete(token);
    if (!held) return false;
    // A lock this process did not take here (another store instance): one WAIT's time to replicate.
    return this.#replicas.waits.resultReplicated(redisKey, args, leaseEnd ?? performance.now() + 1);
  }

  async release(key: string, token: string): Promise<boolean> {
    this.#replicas?.leaseEnds.delete(token);
    return (await this.redis.run(RELEASE, [this.keyOf(key)], [token])) === 1;
  }

  async extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    const lease = Math.max(1, Math.ceil(leaseMs));
    const held = (await this.redis.run(EXTEND, [this.keyOf(key)], [token, lease])) === 1;
    if (held && this.#replicas?.leaseEnds.has(token)) this.#replicas.leaseEnds.set(token, performance.now() + lease);
    return held;
  }

  /**
   * Stops releasing the locks of begins that got no reply (each such lock then ends with its
   * lease at the latest). The client is yours: it stays open. Later begins still work.
   */
  close(): void {
    this.ownerReleases.close();
  }
}

/** Lease ends kept at most (a caller that never completes nor releases leaves one behind). */
const MAX_LEASES_KEPT = 100_000;

function dropEnded(leaseEnds: Map<string, number>): void {
  const now = performance.now();
  for (const [token, end] of leaseEnds) if (end <= now) leaseEnds.delete(token);
}

/** `{ v: value }`: JSON drops `undefined` at the top, the envelope keeps it apart from `null`. */
function encode(value: unknown): string {
  return value === undefined ? "{}" : JSON.stringify({ v: value });
}

/** A stored result read back: its value, or why the text is not one `encode` wrote (never the text itself). */
function decode(stored: unknown): { readonly value: unknown } | { readonly problem: string } {
  if (typeof stored !== "string") return { problem: "the record has no stored result" };
  let envelope: unknown;
  try {
    envelope = JSON.parse(stored);
  } catch {
    return { problem: "its stored result does not parse as JSON" };
  }
  if (typeof envelope === "object" && envelope !== null && !Array.isArray(envelope)) {
    const keys = Object.keys(envelope);
    if (keys.length === 0) return { value: undefined };
    if (keys.length === 1 && keys[0] === "v") return { value: (envelope as { v: unknown }).v };
  }
  return { problem: "its stored result is not the store's { v } envelope" };
}
