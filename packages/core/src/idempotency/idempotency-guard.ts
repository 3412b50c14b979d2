import { abortReason, type Clock } from "../clock.js";
import type { ToolCall } from "../config/options.js";
import type { IdempotencySettings } from "../config/policy.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError } from "../errors/tool-error.js";
import type { StoreErrorReason, StoreOperation } from "../events/events.js";
import type { ExecuteOutcome } from "../outcome.js";
import {
  ARGUMENTS_TOO_DEEP_ACTION,
  argumentsTooDeepMessage,
  IN_PROGRESS_ACTION,
  inProgressMessage,
  KEY_REUSED_ACTION,
  keyRequiredAction,
  keyRequiredMessage,
  keyReusedMessage,
  STORE_BUSY_ACTION,
  STORE_UNAVAILABLE_ACTION,
  storeBusyMessage,
  storeUnavailableMessage,
  UNREADABLE_ARGUMENTS_MESSAGE,
} from "../texts/model-texts.js";
import { ArgumentDepthError, argumentsFingerprint } from "./fingerprint.js";
import { hash128 } from "./hash64.js";
import type { IdempotencyBeginResult, IdempotencyStore } from "./idempotency-store.js";
import { checkBegin, describeValue, readKey, refusal } from "./store-protocol.js";

/** What the guard reads and writes of one logical call. */
export interface GuardedCall {
  readonly call: ToolCall;
  readonly toolName: string;
  readonly scope: string;
  readonly signal: AbortSignal | undefined;
  /** The tool's idempotency settings (the plugin's, or its policy's). */
  readonly idempotency: IdempotencySettings;
  /** Set by `prepare` for a guarded write: the user's key, the store key, the fingerprint. */
  idempotencyKey: string | undefined;
  storeKey: string | undefined;
  fingerprint: string | undefined;
  /** What `prepare` found, kept so that it runs once per call. */
  prepared: "unguarded" | GuardRefusal | "guarded" | undefined;
}

/**
 * The call is turned away before the tool runs: `conflict` names an idempotency conflict, `refused`
 * a refusal of the call itself (for their events).
 */
export interface GuardRefusal {
  readonly refusal: ToolError;
  readonly conflict?: "key_required" | "key_reused" | "in_progress";
  readonly refused?: "overloaded" | "repeated_call";
}

/** A call in flight in this process: later calls with its key join it. */
export interface Flight {
  /** The leader is done (`undefined`: it ended without an outcome, an abort): joiners go on. */
  finish(outcome: ExecuteOutcome<unknown> | undefined): void;
}

interface InFlight {
  readonly fingerprint: string;
  readonly done: Promise<ExecuteOutcome<unknown> | undefined>;
  /** `clock.now()` when the leader took the key: its lease runs from there. */
  readonly startedAt: number;
  /** Resolves when the leader's lease is over; one timer per leader, made when a first call joins. */
  lease?: Promise<"expired">;
  stopLease?: AbortController;
}

/** The longest `retry_after_ms` of an `IN_PROGRESS` refusal: a write held elsewhere usually ends well before its lease. */
const IN_PROGRESS_RETRY_MS = 1000;
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
 * The idempotency guard of `write` tools, one unit: the key and fingerprint, single flight in this
 * process (joins, bounded by the leader's lease and the joiner's own abort), and the store
 * protocol (`begin` / `complete` / `release`), whose faults never become a rejection.
 */
export class IdempotencyGuard {
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    private readonly onStoreError: (call: GuardedCall, operation: StoreOperation, error: unknown, reason?: StoreErrorReason) => void,
  ) {}

  /** Reads the key and fingerprints the arguments (once per call): `"unguarded"`, a refusal, or `"guarded"`. */
  prepare(run: GuardedCall): "unguarded" | GuardRefusal | "guarded" {
    run.prepared ??= this.read(run);
    return run.prepared;
  }

  /**
   * A completed key with these arguments, answered synchronously when the store can (`peekCompleted`)
   * and no call with the key is in flight here: the stored value, else undefined (go the usual way).
   */
  replayNow(run: GuardedCall): { readonly value: unknown } | undefined {
    const peek = this.store.peekCompleted;
    if (peek === undefined || this.prepare(run) !== "guarded" || this.inFlight.has(run.storeKey as string)) return undefined;
    try {
      const record = peek.call(this.store, run.storeKey as string);
      return record !== undefined && record.fingerprint === run.fingerprint ? record : undefined;
    } catch {
      return undefined; // the usual way reports the store's fault
    }
  }

  private read(run: GuardedCall): "unguarded" | GuardRefusal | "guarded" {
    const { key: keyOf, keyField, requireKey, derive } = run.idempotency;
    let given: string | undefined;
    let fingerprint: string;
    try {
      given = derive === "always" ? undefined : keyOf ? keyOf(run.call) : readKey(run.call.args, keyField);
      fingerprint = argumentsFingerprint(run.call.args, omittedField(run.idempotency));
    } catch (error) {
      // The model's arguments, not the tool: an attempt, never a breaker failure. Arguments that
      // cannot be read as data (a getter that throws, a Proxy) are refused the same way.
      return { refusal: unreadableArguments(error) };
    }
    const namespace = namespaceOf(run);
    // A derived key: the same call of the same tool in the same run (scope) and namespace is the
    // same operation, whatever key (or none) the model gave it; never merged across runs or namespaces.
    const key =
      given ?? (derive === "never" ? undefined : `derived-${hash128(namespace, run.call.scope ?? "default", run.toolName, fingerprint)}`);
    if (key === undefined) {
      if (!requireKey) return "unguarded";
      return {
        conflict: "key_required",
        refusal: refusal(ErrorCodes.IDEMPOTENCY_KEY_REQUIRED, keyRequiredMessage(run.toolName), keyRequiredAction(keyField)),
      };
    }
    run.idempotencyKey = key;
    // Hashed before any store sees it: a key is a key only within its namespace and tool.
    run.storeKey = hash128(namespace, run.toolName, key);
    run.fingerprint = fingerprint;
    return "guarded";
  }

  /** Joins a call with the same key in flight here (its outcome), or leads. */
  async enter<T>(run: GuardedCall): Promise<{ flight: Flight } | { shared: ExecuteOutcome<T> } | GuardRefusal> {
    const storeKey = run.storeKey as string;
    for (;;) {
      const leader = this.inFlight.get(storeKey);
      if (leader === undefined) break;
      if (leader.fingerprint !== run.fingerprint) return this.keyReused(run);
      const shared = await this.waitForLeader(leader, run.signal, run.idempotency.leaseMs);
      if (shared === "expired") break; // a hung leader: its lease is over, the store lets this call take the key
      if (shared === undefined) continue; // the leader ended without an outcome: try again, maybe as the leader
      return { shared: shared as ExecuteOutcome<T> };
    }
    let finish!: (outcome: ExecuteOutcome<unknown> | undefined) => void;
    const done = new Promise<ExecuteOutcome<unknown> | undefined>((resolve) => (finish = resolve));
    const entry: InFlight = { fingerprint: run.fingerprint as string, done, startedAt: this.clock.now() };
    this.inFlight.set(storeKey, entry);
    return {
      flight: {
        finish: (outcome) => {
          if (this.inFlight.get(storeKey) === entry) this.inFlight.delete(storeKey);
          entry.stopLease?.abort();
          finish(outcome);
        },
      },
    };
  }

  /** Takes the store's lock for one attempt: a token, the stored result to replay, or a refusal. */
  async lock(run: GuardedCall): Promise<{ token: string } | { replay: unknown } | GuardRefusal> {
    const { store } = this;
    const { leaseMs } = run.idempotency;
    const storeKey = run.storeKey as string;
    const fingerprint = run.fingerprint as string;
    let begun: IdempotencyBeginResult | undefined;
    try {
      const answer: unknown = await store.begin(storeKey, fingerprint, leaseMs);
      begun = checkBegin(answer);
      if (begun === undefined) this.onStoreError(run, "begin", new TypeError(`begin returned ${describeValue(answer)}`));
    } catch (error) {
      this.onStoreError(run, "begin", error);
    }
    if (begun === undefined) {
      return { refusal: refusal(ErrorCodes.STORE_UNAVAILABLE, storeUnavailableMessage(run.toolName), STORE_UNAVAILABLE_ACTION) };
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
        return begun.fingerprint === fingerprint ? { replay: begun.value } : this.keyReused(run);
      default:
        if (begun.fingerprint !== fingerprint) return this.keyReused(run);
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

  private keyReused(run: GuardedCall): GuardRefusal {
    return {
      conflict: "key_reused",
      refusal: refusal(ErrorCodes.IDEMPOTENCY_KEY_REUSED, keyReusedMessage(run.toolName), KEY_REUSED_ACTION),
    };
  }

  /**
   * A joiner waits for the leader's outcome, but no longer than the leader's lease, and never past
   * its own abort. The lease timer is one per leader, shared by every call that joins it.
   */
  private waitForLeader(
    leader: InFlight,
    signal: AbortSignal | undefined,
    leaseMs: number,
  ): Promise<ExecuteOutcome<unknown> | undefined | "expired"> {
    if (leader.lease === undefined) {
      const stop = new AbortController();
      leader.stopLease = stop;
      const remaining = Math.max(0, leader.startedAt + leaseMs - this.clock.now());
      // Stopped when the leader finishes: never settles then, and `done` wins the race.
      leader.lease = this.clock.sleep(remaining, stop.signal).then(
        () => "expired" as const,
        () => new Promise<never>(() => {}),
      );
    }
    const waits: Array<Promise<ExecuteOutcome<unknown> | undefined | "expired">> = [leader.done, leader.lease];
    if (signal === undefined) return Promise.race(waits);
    if (signal.aborted) return Promise.reject(abortReason(signal));
    let onAbort!: () => void;
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(abortReason(signal));
      signal.addEventListener("abort", onAbort, { once: true });
    });
    return Promise.race([...waits, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
  }
}

/** Whose writes a call's are: `call.namespace`, else the call's own scope (not the tracking scope: `"global"` shares counters, never results). */
function namespaceOf(run: GuardedCall): string {
  return run.call.namespace ?? run.call.scope ?? "default";
}

/** Arguments too deep, or that cannot be read as data: `INVALID_ARGUMENTS`, the write does not run. */
function unreadableArguments(error: unknown): ToolError {
  const tooDeep = error instanceof ArgumentDepthError;
  return createToolError({
    code: ErrorCodes.INVALID_ARGUMENTS,
    message: tooDeep ? argumentsTooDeepMessage(error.maxDepth) : UNREADABLE_ARGUMENTS_MESSAGE,
    recoverable: true,
    suggestedAction: ARGUMENTS_TOO_DEEP_ACTION,
    kind: "invalid_arguments",
  });
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
