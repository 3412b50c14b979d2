import { type Clock, systemClock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import { LruMap } from "../internal/lru-map.js";
import { jsonTextOf } from "./fingerprint.js";
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
  /** What it counts against `maxBytes` ({@link approximateBytes}). */
  readonly bytes: number;
}

/** What each completed record counts against `maxBytes` beside its value: its key, fingerprint and bookkeeping. */
const RECORD_OVERHEAD_BYTES = 256;

export interface InMemoryIdempotencyStoreOptions {
  /**
   * Most keys kept, in flight and completed together. Completed results make room for new keys
   * (least recently used first); an in-flight lock is never dropped to make room: when every entry
   * is a live lock, `begin` of a new key answers `busy` until a lock completes or its lease ends.
   * @default 100_000
   */
  readonly maxEntries?: number;
  /**
   * Most bytes of completed results kept, counted as each result's JSON text (two bytes a character
   * when it holds one outside Latin-1; none for a result without JSON text) plus 256 bytes per record:
   * the least recently used results make room for new ones. Locks are not counted. A single larger
   * result is not kept (`complete` answers `true`, the caller has its result, a retry runs the write
   * again). The guard already skips results over `idempotency.maxResultBytes` (1 MiB by default).
   * @default 33_554_432 (32 MiB)
   */
  readonly maxBytes?: number;
  /** @default systemClock */
  readonly clock?: Clock;
}

/**
 * The embedded default store: one process, bounded, with TTL on completed results and a lease on
 * in-flight locks. Expired records are dropped when they are next read, or when room is needed.
 */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  readonly maxEntries: number;
  readonly maxBytes: number;
  private readonly clock: Clock;
  /** In-flight locks, oldest first. Never evicted: they end by `complete`, `release` or their lease. */
  private readonly locks = new Map<string, Lock>();
  private readonly completed: LruMap<string, Completed>;
  /** No lock's lease ends before this time: a full store of live locks is not scanned again until then. */
  private nextLeaseEnd = Number.POSITIVE_INFINITY;
  private tokens = 0;
  /** The completed records' bytes, as counted against `maxBytes`. */
  private completedBytes = 0;

  constructor(options: InMemoryIdempotencyStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) {
      throw new InvalidOptionError("maxEntries", options.maxEntries, "an integer >= 1");
    }
    this.maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
    if (!Number.isInteger(this.maxBytes) || this.maxBytes < RECORD_OVERHEAD_BYTES) {
      throw new InvalidOptionError("maxBytes", options.maxBytes, `an integer >= ${RECORD_OVERHEAD_BYTES}`);
    }
    this.clock = options.clock ?? systemClock;
    this.completed = new LruMap(this.maxEntries, (_key, record) => {
      this.completedBytes -= record.bytes;
    });
  }

  /** Records held (in flight and completed, expired ones not yet dropped included). */
  get size(): number {
    return this.locks.size + this.completed.size;
  }

  /** The completed results' bytes, as counted against `maxBytes`. */
  get bytes(): number {
    return this.completedBytes;
  }

  async begin(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyBeginResult> {
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
      this.completedBytes -= record.bytes;
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

  /** `false` when `token` no longer holds the key (another holder, or its lease ran out): nothing stored. */
  async complete(key: string, token: string, value: unknown, ttlMs: number): Promise<boolean> {
    const lock = this.held(key, token);
    if (lock === undefined) return false;
    this.locks.delete(key);
    const bytes = approximateBytes(value);
    if (bytes > this.maxBytes) return true; // never kept: the caller has its result, a retry runs again
    // A key is locked only while it has no completed record (`begin`): `add`, not `set`.
    this.completedBytes += bytes;
    this.completed.add(key, { fingerprint: lock.fingerprint, value, expiresAt: this.clock.now() + ttlMs, bytes });
    while (this.completedBytes > this.maxBytes && this.completed.evictOldest()) {
      // the least recently used results go first
    }
    return true;
  }

  /**
   * Renews the lease of `token` for `leaseMs` from now, so that a write slower than its lease
   * keeps its key while its holder runs it (the guard renews every half lease). `false` when
   * `token` no longer holds the key.
   */
  async extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    const lock = this.held(key, token);
    if (lock === undefined) return false;
    this.locks.set(key, { ...lock, leaseUntil: this.clock.now() + leaseMs });
    return true;
  }

  async release(key: string, token: string): Promise<boolean> {
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
    this.completedBytes = 0;
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

/** A character outside Latin-1: engines keep a string holding one at two bytes per character. */
const WIDE = /[\u0100-\uffff]/;

/** What a stored result counts against `maxBytes`: its JSON text's length in memory, plus the record's own overhead. */
function approximateBytes(value: unknown): number {
  const json = jsonTextOf(value);
  if (json === undefined) return RECORD_OVERHEAD_BYTES;
  return RECORD_OVERHEAD_BYTES + (WIDE.test(json) ? json.length * 2 : json.length);
}
