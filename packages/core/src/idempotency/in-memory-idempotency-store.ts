import { type Clock, systemClock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import { LruMap } from "../internal/lru-map.js";
import type { IdempotencyBeginResult, IdempotencyStore } from "./idempotency-store.js";

interface Lock {
  readonly fingerprint: string;
  readonly token: string;
  readonly leaseUntil: number;
}

interface Completed {
  readonly fingerprint: string;
  readonly value: unknown;
  readonly expiresAt: number;
}

export interface InMemoryIdempotencyStoreOptions {
  /**
   * Most keys kept, in flight and completed together. Completed results make room for new keys
   * (least recently used first); an in-flight lock is never dropped to make room: when every entry
   * is a live lock, `begin` of a new key answers `busy` until a lock completes or its lease ends.
   * @default 100_000
   */
  readonly maxEntries?: number;
  /** @default systemClock */
  readonly clock?: Clock;
}

/**
 * The embedded default store: one process, bounded, with TTL on completed results and a lease on
 * in-flight locks. Expired records are dropped when they are next read, or when room is needed.
 */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  readonly maxEntries: number;
  private readonly clock: Clock;
  /** In-flight locks, oldest first. Never evicted: they end by `complete`, `release` or their lease. */
  private readonly locks = new Map<string, Lock>();
  private readonly completed: LruMap<string, Completed>;
  /** No lock's lease ends before this time: a full store of live locks is not scanned again until then. */
  private nextLeaseEnd = Number.POSITIVE_INFINITY;
  private tokens = 0;

  constructor(options: InMemoryIdempotencyStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) {
      throw new InvalidOptionError("maxEntries", options.maxEntries, "an integer >= 1");
    }
    this.clock = options.clock ?? systemClock;
    this.completed = new LruMap(this.maxEntries);
  }

  /** Records held (in flight and completed, expired ones not yet dropped included). */
  get size(): number {
    return this.locks.size + this.completed.size;
  }

  begin(key: string, fingerprint: string, leaseMs: number): IdempotencyBeginResult {
    const now = this.clock.now();
    const lock = this.locks.get(key);
    if (lock !== undefined) {
      if (lock.leaseUntil > now) return { status: "in_progress", fingerprint: lock.fingerprint, retryAfterMs: lock.leaseUntil - now };
      this.locks.delete(key); // a crashed or hung holder: its lease is over
    }
    const record = this.completed.get(key);
    if (record !== undefined) {
      if (record.expiresAt > now) return { status: "completed", fingerprint: record.fingerprint, value: record.value };
      this.completed.delete(key);
    }
    if (this.size >= this.maxEntries && !this.makeRoom(now)) {
      return { status: "busy", retryAfterMs: Math.max(1, this.nextLeaseEnd - now) };
    }
    const token = String(++this.tokens);
    const leaseUntil = now + leaseMs;
    this.locks.set(key, { fingerprint, token, leaseUntil });
    if (leaseUntil < this.nextLeaseEnd) this.nextLeaseEnd = leaseUntil;
    return { status: "acquired", token };
  }

  /** The completed, unexpired record of `key`, without touching anything else. */
  peekCompleted(key: string): { readonly fingerprint: string; readonly value: unknown } | undefined {
    const record = this.completed.get(key);
    return record !== undefined && record.expiresAt > this.clock.now() ? record : undefined;
  }

  /** `false` when `token` no longer holds the key (another holder, or its lease ran out): nothing stored. */
  complete(key: string, token: string, value: unknown, ttlMs: number): boolean {
    const lock = this.held(key, token);
    if (lock === undefined) return false;
    this.locks.delete(key);
    this.completed.set(key, { fingerprint: lock.fingerprint, value, expiresAt: this.clock.now() + ttlMs });
    return true;
  }

  release(key: string, token: string): boolean {
    if (this.held(key, token) === undefined) return false;
    this.locks.delete(key);
    return true;
  }

  /** The live lock of `token` (a lock whose lease ran out is dropped: its holder lost it). */
  private held(key: string, token: string): Lock | undefined {
    const lock = this.locks.get(key);
    if (lock?.token !== token) return undefined;
    if (lock.leaseUntil <= this.clock.now()) {
      this.locks.delete(key);
      return undefined;
    }
    return lock;
  }

  /** Forgets every key. */
  clear(): void {
    this.locks.clear();
    this.completed.clear();
    this.nextLeaseEnd = Number.POSITIVE_INFINITY;
  }

  /** Frees one entry: the least recently used completed result, else locks whose lease ran out. */
  private makeRoom(now: number): boolean {
    if (this.completed.evictOldest()) return true;
    if (now < this.nextLeaseEnd) return false;
    let next = Number.POSITIVE_INFINITY;
    for (const [key, lock] of this.locks) {
      if (lock.leaseUntil <= now) this.locks.delete(key);
      else if (lock.leaseUntil < next) next = lock.leaseUntil;
    }
    this.nextLeaseEnd = next;
    return this.size < this.maxEntries;
  }
}
