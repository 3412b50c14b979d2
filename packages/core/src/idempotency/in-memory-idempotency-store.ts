import { systemClock, type Clock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import { LruMap } from "../internal/lru-map.js";
import type { IdempotencyBeginResult, IdempotencyStore } from "./idempotency-store.js";

type StoredRecord =
  | { status: "in_progress"; fingerprint: string; token: string; leaseUntil: number }
  | { status: "completed"; fingerprint: string; value: unknown; expiresAt: number };

export interface InMemoryIdempotencyStoreOptions {
  /** Most keys kept; the least recently written is dropped beyond it. @default 100_000 */
  readonly maxEntries?: number;
  /** @default systemClock */
  readonly clock?: Clock;
}

/**
 * The embedded default store: one process, bounded (LRU by write), with TTL on completed results
 * and a lease on in-flight locks. Expired records are dropped when they are next read.
 */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  readonly maxEntries: number;
  private readonly clock: Clock;
  private readonly records: LruMap<string, StoredRecord>;
  private tokens = 0;

  constructor(options: InMemoryIdempotencyStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) {
      throw new InvalidOptionError("maxEntries", options.maxEntries, "an integer >= 1");
    }
    this.clock = options.clock ?? systemClock;
    this.records = new LruMap(this.maxEntries);
  }

  /** Records held (in flight and completed, expired ones not yet dropped included). */
  get size(): number {
    return this.records.size;
  }

  begin(key: string, fingerprint: string, leaseMs: number): IdempotencyBeginResult {
    const now = this.clock.now();
    const record = this.records.get(key);
    if (record !== undefined) {
      if (record.status === "completed" && record.expiresAt > now) {
        return { status: "completed", fingerprint: record.fingerprint, value: record.value };
      }
      if (record.status === "in_progress" && record.leaseUntil > now) {
        return { status: "in_progress", fingerprint: record.fingerprint, retryAfterMs: record.leaseUntil - now };
      }
    }
    const token = String(++this.tokens);
    this.write(key, { status: "in_progress", fingerprint, token, leaseUntil: now + leaseMs });
    return { status: "acquired", token };
  }

  complete(key: string, token: string, value: unknown, ttlMs: number): void {
    const record = this.records.get(key);
    if (record?.status !== "in_progress" || record.token !== token) return;
    this.write(key, { status: "completed", fingerprint: record.fingerprint, value, expiresAt: this.clock.now() + ttlMs });
  }

  release(key: string, token: string): void {
    const record = this.records.get(key);
    if (record?.status === "in_progress" && record.token === token) this.records.delete(key);
  }

  /** Forgets every key. */
  clear(): void {
    this.records.clear();
  }

  private write(key: string, record: StoredRecord): void {
    this.records.set(key, record);
  }
}
