import { errorMessageOf } from "../classify/error-signals.js";
import { Cleaner, defaultRedactor } from "../cleaning/clean-text.js";
import type { Clock } from "../clock.js";
import type { ToolError } from "../errors/tool-error.js";
import { Notifier } from "../events/notifier.js";
import type { ExecuteOutcome, SuccessOutcome } from "../outcome.js";
import type { GuardedCall, GuardRefusal, IdempotencySettings } from "./guarded-call.js";
import { IdempotencyGuard } from "./idempotency-guard.js";
import { type RequestGuardOptions, resolveRequestGuardOptions } from "./request-guard-options.js";
import type { Flight } from "./single-flight.js";
import type { StoreErrorReport } from "./store-lock.js";

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
 * with the same promises: the key hashed before any store sees it, single flight in this process,
 * one table of answers to the store's `begin`, the lease renewed while the write runs, results over
 * `maxResultBytes` returned but not stored, store faults as refusals before the write and as events
 * after it, and a record that cannot be used never replayed (`WRITE_IN_DOUBT`). Two differences for
 * a server: a key held elsewhere is waited for (up to `waitMs`) rather than refused at once, and what
 * is stored is the JSON view of the result, what the caller received; only a record the host can
 * return is replayed.
 */
export class RequestGuard {
  private readonly guard: IdempotencyGuard;
  private readonly notifier: Notifier;
  private readonly settings: Omit<IdempotencySettings, "key">;
  private readonly waitMs: number;
  private readonly clock: Clock;

  constructor(
    options: RequestGuardOptions,
    private readonly host: RequestGuardHost,
  ) {
    const resolved = resolveRequestGuardOptions(options);
    const { clock } = resolved;
    this.clock = clock;
    this.waitMs = resolved.waitMs;
    this.notifier = new Notifier(resolved.observers, clock);
    const cleaner = new Cleaner(EVENT_TEXT_MAX_LENGTH, defaultRedactor);
    const onStoreError: StoreErrorReport = (run, operation, error, reason) => {
      const fields = { tool_name: run.toolName, operation, error: cleaner.clean(errorMessageOf(error), run.idempotencyKey) };
      this.notifier.emit("store_error", run.toolName, undefined, reason === undefined ? fields : { ...fields, reason });
    };
    this.guard = new IdempotencyGuard(resolved.store, clock, onStoreError, {
      replayable: (value) => host.replayable(value),
      storeJson: true,
    });
    // The key is the request's (not an argument), and every argument is content of the fingerprint.
    this.settings = {
      keyField: "idempotency_key",
      ttlMs: resolved.ttlMs,
      leaseMs: resolved.leaseMs,
      requireKey: true,
      derive: "never",
      maxResultBytes: resolved.maxResultBytes,
    };
  }

  /**
   * Runs `write` for `request` unless its key says otherwise. Rejects only with what `write` threw
   * (its key freed first) or with the request's abort reason during a wait.
   */
  async run<T>(request: GuardedRequest, write: () => T | Promise<T>): Promise<RequestOutcome<T>> {
    const run = this.guardedCall(request);
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

  private guardedCall(request: GuardedRequest): GuardedCall {
    const { toolName, namespace, key, args, signal } = request;
    return {
      call: { toolName, args, scope: namespace, namespace },
      toolName,
      scope: namespace,
      signal,
      idempotency: { ...this.settings, key: () => key },
      idempotencyKey: undefined,
      storeKey: undefined,
      fingerprint: undefined,
      prepared: undefined,
    };
  }
}
