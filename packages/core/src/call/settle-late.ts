import { returnedFailure } from "./attempt-failure.js";
import type { CallRun } from "./call-state.js";
import type { Engine } from "./engine.js";
import { failureContext } from "./failure-context.js";

/**
 * A write whose attempt ended before its tool (cut off at its limit, or left by its caller's abort):
 * its key stays locked, its lease renewed, until the tool ends; then its result is stored (a retry
 * replays it) or its key released, and the renewal stops (`stopLease`).
 */
export function settleLate(engine: Engine, run: CallRun, token: string, late: Promise<unknown>, stopLease: (() => void) | undefined): void {
  late
    .then(
      (value) => {
        const failed = returnedFailure(run.policy, run.host, value, () => failureContext(run));
        return failed === undefined ? engine.guard.complete(run, token, value) : engine.guard.release(run, token);
      },
      () => engine.guard.release(run, token),
    )
    // Nobody awaits this: whatever goes wrong here must not become an unhandled rejection.
    .catch(() => engine.guard.release(run, token))
    .finally(() => stopLease?.());
}
