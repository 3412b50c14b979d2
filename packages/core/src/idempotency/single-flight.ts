import { abortReason, type Clock } from "../clock.js";
import type { ExecuteOutcome } from "../outcome.js";
import type { GuardedCall, GuardRefusal } from "./guarded-call.js";
import { keyReused } from "./store-protocol.js";

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

/**
 * Single flight of writes in this process: the first call with a store key leads, later calls with
 * the key and the same arguments join it and share its outcome, each waiting no longer than the
 * leader's lease and never past its own abort; other arguments under the key are `key_reused`.
 */
export class SingleFlight {
  private readonly inFlight = new Map<string, InFlight>();

  constructor(private readonly clock: Clock) {}

  /** Is a call with this store key in flight here? */
  has(storeKey: string): boolean {
    return this.inFlight.has(storeKey);
  }

  /** Joins a call with the same key in flight here (its outcome), or leads. */
  async enter<T>(run: GuardedCall): Promise<{ flight: Flight } | { shared: ExecuteOutcome<T> } | GuardRefusal> {
    const storeKey = run.storeKey as string;
    for (;;) {
      const leader = this.inFlight.get(storeKey);
      if (leader === undefined) break;
      if (leader.fingerprint !== run.fingerprint) return keyReused(run);
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
