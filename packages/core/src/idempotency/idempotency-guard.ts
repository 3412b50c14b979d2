import { abortReason, type Clock } from "../clock.js";
import type { StoreErrorReason, StoreOperation } from "../events/events.js";
import type { ExecuteOutcome } from "../outcome.js";
import { argumentsFingerprint, jsonTextOf } from "./fingerprint.js";
import type { GuardedCall, GuardRefusal, IdempotencySettings } from "./guarded-call.js";
import type { IdempotencyStore } from "./idempotency-store.js";
import {
  answerOf,
  describeValue,
  hash128,
  keyRequired,
  keyReused,
  type LockAnswer,
  readKey,
  storeUnavailable,
  unreadableArguments,
} from "./store-protocol.js";

/** Told of every store fault (and of a result too large to store, or a record that cannot be used): a `store_error`, never a rejection. */
export type StoreErrorReport = (call: GuardedCall, operation: StoreOperation, error: unknown, reason?: StoreErrorReason) => void;

/**
 * How a guard's records are made and read. The plugin's guard keeps a tool's value as it is and
 * replays any value; a guard of requests that cross a wire (`RequestGuard`) stores what its caller
 * received and replays only a result of its protocol's shape.
 */
export interface RecordRules {
  /**
   * Whether a stored value may be returned to a caller. One that may not (a tampered or corrupted
   * record) is never replayed: `WRITE_IN_DOUBT`, with a `store_error` (`reason: "invalid_record"`).
   * @default every value
   */
  readonly replayable?: (value: unknown) => boolean;
  /** Store the value's JSON view (what a caller across a wire receives), not the value itself. @default false */
  readonly storeJson?: boolean;
}

/** A call in flight in this process: later calls with its key join it. */
export interface Flight {
  /** The leader is done (`undefined`: it ended without an outcome, an abort): joiners go on. */
  finish(outcome: ExecuteOutcome<unknown> | undefined): void;
}

/** A call in flight here: its fingerprint, and its outcome when it is done. */
interface InFlight {
  readonly fingerprint: string;
  readonly done: Promise<ExecuteOutcome<unknown> | undefined>;
}

const LEASE_LOST =
  "the lease on the idempotency key was lost before the call ended (leaseMs too short, or the store lost it): its result is not stored for replay";

/**
 * The argument a write's fingerprint leaves out: the key argument (`keyField`), unless the key comes
 * from `key(call)` (then every argument is content). With `derive: "always"` the key is never the
 * model's, so `keyField` is left out even with `key(call)`: a write re-issued with a new key in that
 * argument is the same write.
 */
export function omittedField(settings: IdempotencySettings): string | undefined {
  return settings.key === undefined || settings.derive === "always" ? settings.keyField : undefined;
}

/**
 * The idempotency guard of `write` tools, one unit: the key and fingerprint (`prepare`), single
 * flight in this process (`enter`), and the store protocol (`lock`, `keepLease`, `complete`,
 * `release`), whose faults go to `onStoreError` and never become a rejection.
 */
export class IdempotencyGuard {
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    private readonly onStoreError: StoreErrorReport,
    private readonly records: RecordRules = {},
  ) {}

  /** Reads the key and fingerprints the arguments (once per call): `"unguarded"`, a refusal, or `"guarded"`. */
  prepare(run: GuardedCall): "unguarded" | GuardRefusal | "guarded" {
    const { key: keyOf, keyField, requireKey } = run.idempotency;
    // A tool whose schema has no key argument cannot be given one: its key is derived, never asked for.
    const undeclared = run.call.declaresKey === false;
    const derive = undeclared && run.idempotency.derive === "never" ? "when-missing" : run.idempotency.derive;
    let given: string | undefined;
    let fingerprint: string;
    try {
      given = derive === "always" ? undefined : keyOf ? keyOf(run.call) : undeclared ? undefined : readKey(run.call.args, keyField);
      fingerprint = argumentsFingerprint(run.call.args, omittedField(run.idempotency));
    } catch (error) {
      return unreadableArguments(error);
    }
    // Whose writes these are: the call's namespace, else its own scope (not the tracking scope: `"global"` shares counters, never results).
    const namespace = run.call.namespace ?? run.call.scope ?? "default";
    // A derived key: the same call of the same tool in the same run (scope) and namespace is the
    // same operation, whatever key (or none) the model gave it; never merged across runs or namespaces.
    const key =
      given ?? (derive === "never" ? undefined : `derived-${hash128(namespace, run.call.scope ?? "default", run.toolName, fingerprint)}`);
    if (key === undefined) return requireKey ? keyRequired(run) : "unguarded";
    run.idempotencyKey = key;
    // Hashed before any store sees it: a key is a key only within its namespace and tool.
    run.storeKey = hash128(namespace, run.toolName, key);
    run.fingerprint = fingerprint;
    return "guarded";
  }

  /**
   * Single flight of writes in this process: the first call with a store key leads, later calls with
   * the key and the same arguments join it and share its outcome; other arguments under the key are
   * `key_reused`. A joiner waits for as long as the leader runs, whatever the store and its lease
   * (the leader is alive here: running the write beside it could do it twice), and never past its own
   * abort. A leader whose tool hangs ends at its attempt limit (`attemptTimeoutMs`).
   */
  async enter<T>(run: GuardedCall): Promise<{ flight: Flight } | { shared: ExecuteOutcome<T> } | GuardRefusal> {
    const storeKey = run.storeKey as string;
    for (let leader = this.inFlight.get(storeKey); leader !== undefined; leader = this.inFlight.get(storeKey)) {
      if (leader.fingerprint !== run.fingerprint) return keyReused(run);
      const shared = await untilDone(leader.done, run.signal);
      // Undefined: the leader ended without an outcome (an abort); try again, maybe as the leader.
      if (shared !== undefined) return { shared: shared as ExecuteOutcome<T> };
    }
    let finish!: (outcome: ExecuteOutcome<unknown> | undefined) => void;
    const entry: InFlight = { fingerprint: run.fingerprint as string, done: new Promise((resolve) => (finish = resolve)) };
    this.inFlight.set(storeKey, entry);
    const flight: Flight = {
      finish: (outcome) => {
        if (this.inFlight.get(storeKey) === entry) this.inFlight.delete(storeKey);
        finish(outcome);
      },
    };
    return { flight };
  }

  /** Takes the store's lock for one attempt: a token, the stored result to replay, or a refusal (`answerOf`). */
  async lock(run: GuardedCall): Promise<LockAnswer> {
    let answer: unknown;
    // Called inside the try (as are complete, release and extend): a store that throws synchronously is read as one that rejects.
    try {
      answer = await this.store.begin(run.storeKey as string, run.fingerprint as string, run.idempotency.leaseMs);
    } catch (error) {
      return this.unavailable(run, error);
    }
    const onInvalidRecord = (problem: string) => this.onStoreError(run, "begin", new Error(problem), "invalid_record");
    return (
      answerOf(run, answer, this.records.replayable ?? (() => true), onInvalidRecord) ??
      this.unavailable(run, new TypeError(`begin returned ${describeValue(answer)}`))
    );
  }

  /** The store did not answer, or answered nonsense: `STORE_UNAVAILABLE`, the write does not run. */
  private unavailable(run: GuardedCall, fault: unknown): GuardRefusal {
    this.onStoreError(run, "begin", fault);
    return storeUnavailable(run, fault);
  }

  /**
   * Renews the lease of a write while its attempt runs, every half lease, for stores with `extend`:
   * a write slower than its lease keeps its key (no other process runs it meanwhile), and a killed
   * process stops renewing, so its key frees within one lease. The returned function stops it.
   */
  keepLease(run: GuardedCall, token: string): (() => void) | undefined {
    const store = this.store;
    if (typeof store.extend !== "function") return undefined;
    const { leaseMs } = run.idempotency;
    const storeKey = run.storeKey as string;
    let stopped = false;
    let stopTimer = (): void => {};
    const renew = async (): Promise<void> => {
      try {
        if ((await store.extend?.(storeKey, token, leaseMs)) === false) return; // lost: complete will say so
      } catch {
        // A store fault: the next renewal tries again, within the lease.
      }
      if (!stopped) next();
    };
    // The plugin's own timer, not a wait of the call: a test clock does not jump to it.
    const next = (): void => {
      stopTimer = this.clock.timer(Math.max(1, Math.floor(leaseMs / 2)), () => void renew(), true);
    };
    next();
    return () => {
      stopped = true;
      stopTimer();
    };
  }

  /** Stores the write's result; a store fault loses only the replay (a `store_error`), never the result. */
  async complete(run: GuardedCall, token: string, value: unknown): Promise<void> {
    const { maxResultBytes, ttlMs } = run.idempotency;
    const json = jsonTextOf(value);
    // Each UTF-16 unit is at least one UTF-8 byte: a longer text is too large without encoding it.
    if (json !== undefined && (json.length > maxResultBytes || new TextEncoder().encode(json).byteLength > maxResultBytes)) {
      // Returned to the caller, never stored: the key is released so that a retry runs again.
      const error = new Error(`the result is larger than idempotency.maxResultBytes (${maxResultBytes} bytes): not stored for replay`);
      this.onStoreError(run, "complete", error, "too_large");
      await this.release(run, token);
      return;
    }
    // A value with no JSON text (a cycle, a BigInt) is left to the store, as it is.
    const record = this.records.storeJson === true && json !== undefined ? JSON.parse(json) : value;
    await this.settle(run, "complete", () => this.store.complete(run.storeKey as string, token, record, ttlMs));
  }

  /** Drops the lock after a failed attempt, so that a retry may run. */
  release(run: GuardedCall, token: string): Promise<void> {
    return this.settle(run, "release", () => this.store.release(run.storeKey as string, token));
  }

  /** Ends the holding of a key: `false` from the store (the lease was lost) and store faults are reported, never thrown. */
  private async settle(run: GuardedCall, operation: "complete" | "release", end: () => Promise<boolean>): Promise<void> {
    try {
      if ((await end()) === false) this.onStoreError(run, operation, new Error(LEASE_LOST));
    } catch (error) {
      this.onStoreError(run, operation, error);
    }
  }
}

/** The leader's outcome, or the joiner's abort (a rejection with its reason), whichever comes first. */
function untilDone<T>(done: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return done;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    done.then(resolve).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
