import type { CircuitState } from "../outcome.js";
import type { CircuitTransition } from "./circuit-breaker-options.js";

/** Permission to run one call. `probe` is the half-open generation it holds, or 0. */
export interface CircuitPermit {
  readonly probe: number;
}

/**
 * `retryAfterMs` is `Infinity` for an isolated circuit: it opens again only with `reset()`.
 */
export type CircuitDecision =
  | { readonly admitted: true; readonly permit: CircuitPermit }
  | { readonly admitted: false; readonly retryAfterMs: number; readonly state: CircuitState };

/** The breaker settings of the tool a call belongs to, passed with every store call (one store serves tools with different settings). */
export interface CircuitStoreSettings {
  /** Consecutive failures that open a closed circuit. */
  readonly threshold: number;
  /** The first open period, and a probe's lease. */
  readonly resetMs: number;
  /** Each failed probe doubles the open period up to this; undefined: every period is `resetMs`. */
  readonly maxResetMs: number | undefined;
}

/** What one call said about the tool's health: `neutral` (bad arguments, a refusal, an abort) only frees a probe's slot. */
export type CircuitResult = "success" | "failure" | "neutral";

/** `acquire`'s answer, and the state change it made (open to half-open), if any. */
export type CircuitAdmission = CircuitDecision & { readonly transition?: CircuitTransition };

/**
 * Where circuit state lives, for breakers shared by many processes (`circuitBreakerStore`; a
 * `RedisCircuitBreakerStore` from `@retry-reflect/redis`). Without one, each plugin keeps its circuits
 * in memory. Keys are tool names (or what `circuitBreakerKey` returns).
 *
 * The local view (`isClosed`, `peek`, `state`) is synchronous, does no I/O and changes nothing: it is
 * what this process knows now (a closed circuit costs the healthy call nothing). `acquire`,
 * `record`, `isolate` and `reset` return promises; `acquire` and `record` should answer without I/O
 * while the local view is closed and nothing needs telling (a success with no failures known). An
 * `acquire` or `record` that throws or rejects never makes a call reject: the plugin emits
 * `store_error` and goes on; a result `record` could not take updates an in-memory breaker of the
 * plugin's that stands in for the store (it opens, half-opens and closes the circuit on its own while
 * the store cannot answer; see `StoreBreaker`). Bound your own calls' time: a failing call waits for
 * `record`.
 */
export interface CircuitBreakerStore {
  /** Is the circuit of `key` closed as far as this process knows? No I/O. */
  isClosed(key: string): boolean;
  /** Would a call be rejected now, and for how long (`Infinity` while isolated)? No I/O. */
  peek(key: string): number | undefined;
  /** The state as far as this process knows (an isolated circuit reads `open`). No I/O. */
  state(key: string): CircuitState;
  /** Admits a call (with a permit to report back with) or rejects it. */
  acquire(key: string, settings: CircuitStoreSettings): Promise<CircuitAdmission>;
  /** Records a call's result under its permit; returns the state change it made, if any. A stale probe's result changes nothing. */
  record(key: string, permit: CircuitPermit, result: CircuitResult, settings: CircuitStoreSettings): Promise<CircuitTransition | undefined>;
  /** Holds the circuit open until `reset(key)`. */
  isolate(key: string): Promise<void>;
  /** Closes `key` (or every circuit this store knows of) and forgets its failures. */
  reset(key?: string): Promise<void>;
  /** Circuits this process holds in its local view. @default 0 */
  readonly size?: number;
  /**
   * Shares a tool's retry budget (`retryBudget`) across processes; optional: without it each
   * process keeps its own budget. Adds this process's counts not sent yet to the fleet's window
   * and, with `take`, takes one in-place retry when the fleet's window has room for it (atomically:
   * two processes never take the last one both). Asked on the failure path only: for each in-place
   * retry, and with the calls of a tool that failed here in the window, at most once a second.
   * A rejection keeps the counts for the next time (the budget is then judged on what is known here).
   * A failure-rate breaker's window (`circuitBreakerFailureRate`) is shared the same way, under the
   * key `"\u0000failure-rate\u0000" + key`, its counts `[age, calls, failures, ...]` in place of
   * calls and retries, `take` always false: sum the counts per bucket whatever they are.
   */
  shareBudget?(key: string, share: BudgetShare): Promise<BudgetShareReply>;
}

/**
 * What `shareBudget` sends: the budget and this process's counts since its last share, by age (the
 * store's own clock dates them: processes whose clocks differ still share one window).
 */
export interface BudgetShare {
  readonly ratio: number;
  readonly minPerSecond: number;
  /** The window, sliding in buckets of a tenth of it; the ten newest are live. */
  readonly windowMs: number;
  /** Flat `[age, calls, retries, ...]`, `age` in buckets before now's (0: now's bucket, at most 9). */
  readonly counts: readonly number[];
  /** Take one retry (in now's bucket) if the window, these counts added, has room for it. */
  readonly take: boolean;
}

/** What `shareBudget` answers. */
export interface BudgetShareReply {
  /** Whether the retry asked for (`take`) was taken. */
  readonly taken: boolean;
  /** The fleet's live buckets after the share (the retry taken included), flat `[age, calls, retries, ...]`. */
  readonly buckets: readonly number[];
}
