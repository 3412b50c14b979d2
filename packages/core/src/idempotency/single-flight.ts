import { abortReason } from "../clock.js";
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
}

/**
 * Single flight of writes in this process: the first call with a store key leads, later calls with
 * the key and the same arguments join it and share its outcome; other arguments under the key are
 * `key_reused`. A joiner waits for as long as the leader runs, whatever the store and its lease
 * (the leader is alive here: running the write beside it could do it twice), and never past its own
 * abort. A leader whose tool hangs ends at its attempt limit (`attemptTimeoutMs`, at most 60 s by default).
 */
export class SingleFlight {
  private readonly inFlight = new Map<string, InFlight>();

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
      const shared = await untilDone(leader.done, run.signal);
      if (shared === undefined) continue; // the leader ended without an outcome: try again, maybe as the leader
      return { shared: shared as ExecuteOutcome<T> };
    }
    let finish!: (outcome: ExecuteOutcome<unknown> | undefined) => void;
    const done = new Promise<ExecuteOutcome<unknown> | undefined>((resolve) => (finish = resolve));
    const entry: InFlight = { fingerprint: run.fingerprint as string, done };
    this.inFlight.set(storeKey, entry);
    return {
      flight: {
        finish: (outcome) => {
          if (this.inFlight.get(storeKey) === entry) this.inFlight.delete(storeKey);
          finish(outcome);
        },
      },
    };
  }
}

/** The leader's outcome, or the joiner's abort (a rejection with its reason), whichever comes first. */
function untilDone<T>(done: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return done;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  let onAbort!: () => void;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([done, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}
