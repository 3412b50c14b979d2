import type { Clock } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError } from "../errors/tool-error.js";
import type { StoreErrorReason, StoreOperation } from "../events/events.js";
import {
  IN_DOUBT_ACTION,
  IN_PROGRESS_ACTION,
  inDoubtMessage,
  inProgressMessage,
  STORE_BUSY_ACTION,
  STORE_UNAVAILABLE_ACTION,
  storeBusyMessage,
  storeUnavailableMessage,
} from "../texts/model-texts.js";
import type { GuardedCall, GuardRefusal } from "./guarded-call.js";
import type { IdempotencyBeginResult, IdempotencyStore } from "./idempotency-store.js";
import { checkBegin, describeValue, keyReused, refusal } from "./store-protocol.js";

/** Told of every store fault (and of a result too large to store): a `store_error`, never a rejection. */
export type StoreErrorReport = (call: GuardedCall, operation: StoreOperation, error: unknown, reason?: StoreErrorReason) => void;

/** The longest `retry_after_ms` of an `IN_PROGRESS` refusal: a write held elsewhere usually ends well before its lease. */
const IN_PROGRESS_RETRY_MS = 1000;
const LEASE_LOST =
  "the lease on the idempotency key was lost before the call ended (leaseMs too short, or the store lost it): its result is not stored for replay";

/**
 * A write's key in the idempotency store, one attempt at a time: locked (`begin`), its lease kept
 * while the attempt runs (`extend`), then completed with the result or released. Store faults are
 * reported to `onStoreError`, never thrown.
 */
export class StoreLock {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    private readonly onStoreError: StoreErrorReport,
  ) {}

  /** Takes the store's lock for one attempt: a token, the stored result to replay, or a refusal. */
  async lock(run: GuardedCall): Promise<{ token: string } | { replay: unknown } | GuardRefusal> {
    const { store } = this;
    const { leaseMs } = run.idempotency;
    const storeKey = run.storeKey as string;
    const fingerprint = run.fingerprint as string;
    let begun: IdempotencyBeginResult | undefined;
    let fault: unknown;
    try {
      const answer: unknown = await store.begin(storeKey, fingerprint, leaseMs);
      begun = checkBegin(answer);
      if (begun === undefined) fault = new TypeError(`begin returned ${describeValue(answer)}`);
    } catch (error) {
      fault = error;
    }
    if (begun === undefined) {
      this.onStoreError(run, "begin", fault);
      // The store's own error is the refusal's `cause`, for the caller and the logs: never in the model's text.
      const unavailable = refusal(
        ErrorCodes.STORE_UNAVAILABLE,
        storeUnavailableMessage(run.toolName),
        STORE_UNAVAILABLE_ACTION,
        undefined,
        fault,
      );
      return { refusal: unavailable };
    }
    switch (begun.status) {
      case "acquired":
        return { token: begun.token };
      case "busy":
        return {
          conflict: "in_progress",
          refusal: refusal(ErrorCodes.IN_PROGRESS, storeBusyMessage(run.toolName), STORE_BUSY_ACTION, begun.retryAfterMs),
        };
      case "completed":
        return begun.fingerprint === fingerprint ? { replay: begun.value } : keyReused(run);
      case "in_doubt":
        if (begun.fingerprint !== fingerprint) return keyReused(run);
        // It may have taken effect: running it again could do it twice. A stop, not a wait.
        return {
          conflict: "in_doubt",
          refusal: createToolError({
            code: ErrorCodes.WRITE_IN_DOUBT,
            message: inDoubtMessage(run.toolName),
            recoverable: false,
            suggestedAction: IN_DOUBT_ACTION,
          }),
        };
      default:
        if (begun.fingerprint !== fingerprint) return keyReused(run);
        return {
          conflict: "in_progress",
          // The holder may finish any moment (its lease is only the longest it may take): ask again soon.
          refusal: refusal(
            ErrorCodes.IN_PROGRESS,
            inProgressMessage(run.toolName),
            IN_PROGRESS_ACTION,
            Math.min(begun.retryAfterMs, IN_PROGRESS_RETRY_MS),
          ),
        };
    }
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
    const { leaseMs } = run.idempotency;
    const storeKey = run.storeKey as string;
    const renew = (): void => {
      this.clock.sleep(Math.max(1, Math.floor(leaseMs / 2)), stop.signal).then(
        async () => {
          try {
            if ((await store.extend?.(storeKey, token, leaseMs)) === false) return; // lost: complete will say so
          } catch {
            // A store fault: the next renewal tries again, within the lease.
          }
          if (!stop.signal.aborted) renew();
        },
        () => {}, // stopped
      );
    };
    renew();
    return () => stop.abort();
  }

  /** Stores the write's result; a store fault loses only the replay (a `store_error`), never the result. */
  async complete(run: GuardedCall, token: string, value: unknown): Promise<void> {
    const { maxResultBytes } = run.idempotency;
    if (exceedsBytes(value, maxResultBytes)) {
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
    try {
      const held = await this.store.complete(run.storeKey as string, token, value, run.idempotency.ttlMs);
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

/**
 * Is the JSON text of `value` longer than `maxBytes` in UTF-8? Counted exactly only when the answer
 * is not plain from its UTF-16 length (each unit is 1 to 3 bytes). A value that has no JSON text
 * (a cycle, a BigInt, a getter that throws) is left to the store, as before the limit.
 */
function exceedsBytes(value: unknown, maxBytes: number): boolean {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return false;
  }
  if (json === undefined || json.length * 3 <= maxBytes) return false;
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
