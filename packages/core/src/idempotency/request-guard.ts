import { errorMessageOf } from "../classify/error-signals.js";
import { Cleaner, defaultRedactor } from "../cleaning/clean-text.js";
import { type Clock, systemClock } from "../clock.js";
import { clock as checkClock, observers as checkObservers, finite, idempotencyStore } from "../config/checks.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { ToolError } from "../errors/tool-error.js";
import type { RetryReflectObserver } from "../events/events.js";
import { Notifier } from "../events/notifier.js";
import type { ExecuteOutcome, SuccessOutcome } from "../outcome.js";
import type { GuardedCall, GuardRefusal, IdempotencySettings } from "./guarded-call.js";
import { type Flight, IdempotencyGuard, type StoreErrorReport } from "./idempotency-guard.js";
import type { IdempotencyStore } from "./idempotency-store.js";

/** The options of a `RequestGuard`: a host passes its users' options through (an MCP server's `withIdempotency`). */
export interface RequestGuardOptions {
  /** Where results are kept by key: an `InMemoryIdempotencyStore` for one process, a shared store (Redis) for a fleet. */
  readonly store: IdempotencyStore;
  /** How long a completed result is kept, in ms. @default 86_400_000 (a day) */
  readonly ttlMs?: number;
  /**
   * How long a running request holds its key without renewal, in ms. The lease is renewed every
   * half lease while the write runs (stores with `extend`: the in-memory and Redis stores), so a
   * write may take longer; a process that dies stops renewing, and its key frees within one lease.
   * @default 30_000
   */
  readonly leaseMs?: number;
  /**
   * How long a request whose key is running elsewhere (another process on a shared store) waits
   * for that result, re-reading the store after 50 ms, then twice as long each time up to 1 s,
   * before it is refused `IN_PROGRESS`, in ms. A request whose key is running in this process
   * waits for it for as long as it runs (it is alive here: running beside it could do it twice),
   * until the request is cancelled. @default 30_000
   */
  readonly waitMs?: number;
  /**
   * The largest result stored, in bytes of its JSON text: a larger one is returned to its caller,
   * not stored (a `store_error` with `reason: "too_large"`), and its key is freed, so that a retry
   * runs again. `0` stores no result. @default 1_048_576 (1 MiB)
   */
  readonly maxResultBytes?: number;
  /** For the waits, the lease renewals and the events' time. @default the system clock */
  readonly clock?: Clock;
  /** Told of `idempotent_replay`, `idempotency_conflict` and `store_error` (`consoleLogger()`, the otel observer). @default [] */
  readonly observers?: readonly RetryReflectObserver[];
}

/** One request that carries an idempotency key, as a host reads it. */
export interface GuardedRequest {
  /** The tool (or operation) the request runs: keys are kept per tool, and refusals name it. */
  readonly toolName: string;
  /** Whose request it is (the caller): a stored result is replayed only within its namespace. */
  readonly namespace: string;
  /** The request's idempotency key. */
  readonly key: string;
  /** Its arguments: the same key with other arguments is `IDEMPOTENCY_KEY_REUSED`. */
  readonly args: unknown;
  /** The request's own signal: a wait for a key held elsewhere ends when it aborts (with its reason). */
  readonly signal: AbortSignal | undefined;
}

/** What a host says of its own results (not a user's option). */
export interface RequestGuardHost {
  /** A returned result that is a failure: nothing is stored and the key is freed, so that a retry runs. */
  failed(value: unknown): boolean;
  /** Whether a stored record is a result the host can return (its protocol's shape); one that is not is never replayed. */
  replayable(value: unknown): boolean;
}

/**
 * How a guarded request ended: its write ran (`value` is what it returned), its stored result was
 * replayed (the write did not run for it), or it was refused without running (`error`: the
 * structured refusal, `IDEMPOTENCY_KEY_REUSED`, `IN_PROGRESS`, `WRITE_IN_DOUBT`, `STORE_UNAVAILABLE`
 * or `INVALID_ARGUMENTS`).
 */
export type RequestOutcome<T> =
  | { readonly status: "ran"; readonly value: T }
  | { readonly status: "replayed"; readonly value: unknown }
  | { readonly status: "refused"; readonly error: ToolError };

/** The first wait before the store is read again for a key held elsewhere, and the longest. */
const FIRST_POLL_MS = 50;
const MAX_POLL_MS = 1000;
/** The plugin's default `maxErrorLength`: a store's error text in a `store_error` event is capped at it. */
const EVENT_TEXT_MAX_LENGTH = 1000;

/**
 * The idempotency guard of a host that serves requests (an MCP server's tool handler): a request
 * with a key runs its write once per (namespace, tool, key), through the plugin's own guard, so
 * with the same promises. Two differences for a server: a key held elsewhere is waited for (up to
 * `waitMs`) rather than refused at once, and what is stored is the JSON view of the result, what
 * the caller received; only a record the host can return is replayed.
 */
export class RequestGuard {
  private readonly guard: IdempotencyGuard;
  private readonly notifier: Notifier;
  private readonly settings: Omit<IdempotencySettings, "key">;
  private readonly waitMs: number;
  private readonly clock: Clock;

  /** Checks the options once, naming the option and the value of the first that is wrong (`InvalidOptionError`). */
  constructor(
    options: RequestGuardOptions,
    private readonly host: RequestGuardHost,
  ) {
    if (typeof options !== "object" || options === null) throw new InvalidOptionError("options", options, "an object with a `store`");
    // The plugin's own checks: the same values are refused with the same words.
    const store = idempotencyStore(options.store, "store");
    const clock = options.clock === undefined ? systemClock : checkClock(options.clock, "clock"); // the lease renewals run on its timer
    const observers = options.observers === undefined ? [] : checkObservers(options.observers, "observers");
    const ttlMs = positive("ttlMs", options.ttlMs, 86_400_000);
    const leaseMs = positive("leaseMs", options.leaseMs, 30_000);
    this.waitMs = positive("waitMs", options.waitMs, 30_000);
    const maxResultBytes = bytes("maxResultBytes", options.maxResultBytes, 1_048_576);
    // The key is the request's (not an argument), and every argument is content of the fingerprint.
    this.settings = { keyField: "idempotency_key", ttlMs, leaseMs, requireKey: true, derive: "never", maxResultBytes };
    this.clock = clock;
    this.notifier = new Notifier(observers, clock);
    const cleaner = new Cleaner(EVENT_TEXT_MAX_LENGTH, defaultRedactor);
    const onStoreError: StoreErrorReport = (run, operation, error, reason) => {
      const fields = { tool_name: run.toolName, operation, error: cleaner.clean(errorMessageOf(error), run.idempotencyKey) };
      this.notifier.emit("store_error", run.toolName, undefined, reason === undefined ? fields : { ...fields, reason });
    };
    this.guard = new IdempotencyGuard(store, clock, onStoreError, { replayable: (value) => host.replayable(value), storeJson: true });
  }

  /**
   * Runs `write` for `request` unless its key says otherwise. Rejects only with what `write` threw
   * (its key freed first) or with the request's abort reason during a wait.
   */
  async run<T>(request: GuardedRequest, write: () => T | Promise<T>): Promise<RequestOutcome<T>> {
    const { toolName, namespace, key, args, signal } = request;
    const run: GuardedCall = {
      call: { toolName, args, scope: namespace, namespace },
      toolName,
      signal,
      idempotency: { ...this.settings, key: () => key },
    };
    const prepared = this.guard.prepare(run);
    // Arguments that cannot be read as data (too deep, a getter that throws): refused, never run.
    if (prepared !== "guarded") return this.refused(run, prepared as GuardRefusal);
    const entered = await this.guard.enter<T>(run);
    if ("refusal" in entered) return this.refused(run, entered);
    // Joined the request with this key in flight here: leaders share only a result (a failure frees the key, and the joiner leads next).
    if ("shared" in entered) return this.replayed(run, (entered.shared as SuccessOutcome<T>).value);
    return this.lead(run, entered.flight, write);
  }

  /** The one request with this key in flight here: takes the store's lock (waiting for one held elsewhere), runs or replays. */
  private async lead<T>(run: GuardedCall, flight: Flight, write: () => T | Promise<T>): Promise<RequestOutcome<T>> {
    let shared: ExecuteOutcome<unknown> | undefined;
    try {
      const deadline = this.clock.now() + this.waitMs;
      for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, MAX_POLL_MS)) {
        const locked = await this.guard.lock(run);
        if ("token" in locked) {
          const value = await this.runWrite(run, locked.token, write);
          if (!this.host.failed(value)) shared = { status: "success", value, attempt: 1, replayed: false };
          return { status: "ran", value };
        }
        if ("replay" in locked) {
          shared = { status: "success", value: locked.replay, attempt: 1, replayed: true };
          return this.replayed(run, locked.replay);
        }
        const left = deadline - this.clock.now();
        if (locked.conflict !== "in_progress" || left <= 0) return this.refused(run, locked);
        // Held elsewhere (another process on a shared store): its result may come any moment.
        const wait = Math.min(locked.refusal.retryAfterMs ?? poll, poll, left);
        await this.clock.sleep(Math.max(1, wait), run.signal);
      }
    } finally {
      flight.finish(shared);
    }
  }

  /** The write, its lease renewed while it runs; then its result stored (a success) or its key freed. */
  private async runWrite<T>(run: GuardedCall, token: string, write: () => T | Promise<T>): Promise<T> {
    const stopLease = this.guard.keepLease(run, token);
    let value: T;
    try {
      value = await write();
    } catch (error) {
      stopLease?.();
      await this.guard.release(run, token);
      throw error;
    }
    stopLease?.();
    if (this.host.failed(value)) await this.guard.release(run, token);
    else await this.guard.complete(run, token, value);
    return value;
  }

  private replayed(run: GuardedCall, value: unknown): RequestOutcome<never> {
    this.notifier.emit("idempotent_replay", run.toolName, undefined, { tool_name: run.toolName });
    return { status: "replayed", value };
  }

  private refused(run: GuardedCall, refused: GuardRefusal): RequestOutcome<never> {
    if (refused.conflict !== undefined) {
      this.notifier.emit("idempotency_conflict", run.toolName, undefined, { tool_name: run.toolName, reason: refused.conflict });
    }
    return { status: "refused", error: refused.refusal };
  }
}

const greaterThanZero = finite(0, true);

function positive(name: string, value: unknown, fallback: number): number {
  return value === undefined ? fallback : greaterThanZero(value, name);
}

function bytes(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw new InvalidOptionError(name, value, "an integer >= 0");
  return value;
}
