import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError } from "../errors/tool-error.js";
import type { GuardRefusal } from "../idempotency/guarded-call.js";
import { OVERLOADED_ACTION, overloadedMessage } from "../texts/model-texts.js";
import type { CallRun } from "./call-state.js";
import type { Engine } from "./engine.js";

// `maxConcurrent`: a slot per running attempt of a tool, held while the attempt runs (not during
// waits); a call that finds every slot taken is refused (`OVERLOADED`).

/** Takes a slot of the tool: false when `limit` attempts of it are running. */
export function takeSlot(engine: Engine, toolName: string, limit: number): boolean {
  const running = engine.running.get(toolName) ?? 0;
  if (running >= limit) return false;
  engine.running.set(toolName, running + 1);
  return true;
}

export function releaseSlot(engine: Engine, toolName: string): void {
  const running = (engine.running.get(toolName) ?? 1) - 1;
  if (running > 0) engine.running.set(toolName, running);
  else engine.running.delete(toolName);
}

/** The refusal of a call that found every slot taken. */
export function overloaded(run: CallRun, limit: number): GuardRefusal {
  return {
    refused: "overloaded",
    refusal: createToolError({
      code: ErrorCodes.OVERLOADED,
      message: overloadedMessage(run.toolName, limit),
      recoverable: true,
      suggestedAction: OVERLOADED_ACTION,
      retryAfterMs: Math.max(1, run.policy.initialBackoffMs),
    }),
  };
}
