import { type Clock, TIMER_STOPPED, watchdogSignal } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import type { StoreErrorReason, StoreOperation } from "../events/events.js";
import { STORE_UNAVAILABLE_ACTION, storeUnavailableMessage } from "../texts/model-texts.js";
import type { GuardedCall, GuardRefusal } from "./guarded-call.js";
import type { IdempotencyStore } from "./idempotency-store.js";
import { answerOf, describeValue, type LockAnswer, readBegin, refusal } from "./store-protocol.js";

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

const anyValue = (): boolean => true;
const LEASE_LOST =
  "the lease on the idempotency key was lost before the call ended (leaseMs too short, or the store lost it): its result is not stored for replay";

/**
 * A write's key in the idempotency store, one attempt at a time: locked (`begin`, read through the
 * one table of answers), its lease kept while the attempt runs (`extend`), then completed with the
 * result or released. Store faults are reported to `onStoreError`, never thrown.
 */
export class StoreLock {
  private readonly replayable: (value: unknown) => boolean;
  private readonly storeJson: boolean;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    private readonly onStoreError: StoreErrorReport,
    records: RecordRules = {},
  ) {
    this.replayable = records.replayable ?? anyValue;
    this.storeJson = records.storeJson === true;
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
    const begun = readBegin(answer, this.replayable);
    if (begun === undefined) return this.unavailable(run, new TypeError(`begin returned ${describeValue(answer)}`));
    if (begun.status === "invalid_record") this.onStoreError(run, "begin", new Error(begun.problem), "invalid_record");
    return answerOf(run, begun);
  }

  /** The store did not answer, or answered nonsense: `STORE_UNAVAILABLE`, the write does not run. */
  private unavailable(run: GuardedCall, fault: unknown): GuardRefusal {
    this.onStoreError(run, "begin", fault);
    // The store's own error is the refusal's `cause`, for the caller and the logs: never in the model's text.
    return {
      refusal: refusal(ErrorCodes.STORE_UNAVAILABLE, storeUnavailableMessage(run.toolName), STORE_UNAVAILABLE_ACTION, undefined, fault),
    };
  }

  /**
   * Renews the lease of a write while its attempt runs, every half lease, for stores with `extend`:
   * a write slower than its lease keeps its key (no other process runs it meanwhile), and a killed
   * process stops renewing, so its key frees within one lease. The returned function stops it.
   */
  keepLease(run: GuardedCall, token: string): (() => void) | undefined {
    const store = this.store;
    if (typeof store.extend !== "function") return undefined;
    const stop = new AbortController();
    // The plugin's own timer, not a wait of the call: a test clock leaves it out of its pending sleeps.
    const stopped = watchdogSignal(stop);
    const { leaseMs } = run.idempotency;
    const storeKey = run.storeKey as string;
    const renew = (): void => {
      this.clock.sleep(Math.max(1, Math.floor(leaseMs / 2)), stopped).then(
        async () => {
          try {
            if ((await store.extend?.(storeKey, token, leaseMs)) === false) return; // lost: complete will say so
          } catch {
            // A store fault: the next renewal tries again, within the lease.
          }
          if (!stopped.aborted) renew();
        },
        () => {}, // stopped
      );
    };
    renew();
    return () => stop.abort(TIMER_STOPPED);
  }

  /** Stores the write's result; a store fault loses only the replay (a `store_error`), never the result. */
  async complete(run: GuardedCall, token: string, value: unknown): Promise<void> {
    const { maxResultBytes } = run.idempotency;
    const json = jsonTextOf(value);
    if (json !== undefined && exceedsBytes(json, maxResultBytes)) {
      // Returned to the caller, never stored: the key is released so that a retry runs again.
      this.onStoreError(
        run,
        "complete",
        new Error(`the result is larger than idempotency.maxResultBytes (${maxResultBytes} bytes): not stored for replay`),
        "too_large",
      );
      await this.release(run, token);
      return;
    }
    // A value with no JSON text (a cycle, a BigInt) is left to the store, as it is.
    const record = this.storeJson && json !== undefined ? JSON.parse(json) : value;
    try {
      const held = await this.store.complete(run.storeKey as string, token, record, run.idempotency.ttlMs);
      if (held === false) this.onStoreError(run, "complete", new Error(LEASE_LOST));
    } catch (error) {
      this.onStoreError(run, "complete", error);
    }
  }

  /** Drops the lock after a failed attempt, so that a retry may run. */
  async release(run: GuardedCall, token: string): Promise<void> {
    try {
      const held = await this.store.release(run.storeKey as string, token);
      if (held === false) this.onStoreError(run, "release", new Error(LEASE_LOST));
    } catch (error) {
      this.onStoreError(run, "release", error);
    }
  }
}

/** The JSON text of `value`; undefined when it has none (`undefined`, a cycle, a BigInt, a getter that throws). */
function jsonTextOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * Is `json` longer than `maxBytes` in UTF-8? Counted exactly only when the answer is not plain from
 * its UTF-16 length (each unit is 1 to 3 bytes).
 */
function exceedsBytes(json: string, maxBytes: number): boolean {
  if (json.length * 3 <= maxBytes) return false;
  if (json.length > maxBytes) return true;
  let bytes = 0;
  for (let index = 0; index < json.length; index++) {
    const code = json.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4; // a surrogate pair: 4 bytes for both units
      index++;
    } else bytes += 3;
    if (bytes > maxBytes) return true;
  }
  return false;
}
