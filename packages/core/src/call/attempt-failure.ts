import { classifyError, isReturnedFailure } from "../classify/classify-error.js";
import type { FailureContext } from "../config/options.js";
import type { ResolvedPolicy } from "../config/policy.js";
import { ToolError } from "../errors/tool-error.js";
import { lateOf } from "./attempt.js";
import type { HostReading } from "./call-state.js";
import type { EngineCall, ThrownReading } from "./tool-call.js";

// What an attempt did, read as a failure: a returned value that reports one, or what a thrown
// error is to classify. A host adapter's call (`runToolCall`) reads both its own way.

/**
 * Failure detection for a returned value: the host's own test when the call comes from an adapter
 * (an error `ToolMessage`), else the built-in shapes (a `ToolError`, the structured error shape,
 * MCP `isError`); then the policy's `isFailure` (which can only add failures). The failure to
 * classify, or undefined for a success. Costs nothing more for a tool without `isFailure`.
 */
export function returnedFailure(
  policy: ResolvedPolicy,
  host: EngineCall | undefined,
  value: unknown,
  context: (() => FailureContext) | undefined,
): unknown {
  if (host?.failureOfResult !== undefined) {
    const reported = host.failureOfResult(value);
    if (reported !== undefined) return reported;
  } else if (isReturnedFailure(value)) return value;
  const isFailure = policy.isFailure;
  if (isFailure === undefined || context === undefined) return undefined;
  let verdict: boolean | ToolError | undefined;
  try {
    verdict = isFailure(value, context());
  } catch {
    // A throwing hook adds nothing: the value is judged by the built-in shapes alone (a success
    // here). Never a crash, and never a failure the tool did not report.
    return undefined;
  }
  // `true`: the value itself is the failure, classified as a thrown one would be (the policy's
  // `classifyError`, then the built-in rules: a returned `{ status: 503 }` is transient). Undefined
  // would read as a success: it is classified here.
  if (verdict === true) return value === undefined ? classifyError(value) : value;
  return ToolError.isInstance(verdict) ? verdict : undefined;
}

/**
 * A host call's reading of what its tool threw (`readThrown`, may be async), checked: the failure
 * to classify, whether it is the host's control flow, the host's retry mark. The core's own attempt
 * timeout is not read (a write's may still be running: the failure stage reads that off it); a
 * reader that throws, or answers with anything but a reading, leaves the error as thrown. The
 * caller's abort needs nothing here: the failure stage asks the signal. Boxed: what a tool threw may
 * be a hostile object that must never be read as a thenable.
 */
export async function readThrown(host: EngineCall, thrown: unknown, args: unknown): Promise<HostReading> {
  if (host.readThrown === undefined || lateOf(thrown) !== undefined) return asThrown(thrown);
  try {
    const read = host.readThrown(thrown, args);
    const reading: unknown = isPromise(read) ? await read : read;
    if (typeof reading !== "object" || reading === null) return asThrown(thrown);
    const { failure, passThrough, retryable } = reading as ThrownReading;
    return { thrown, failure, passThrough: passThrough === true, retryable: typeof retryable === "boolean" ? retryable : undefined };
  } catch {
    return asThrown(thrown);
  }
}

function asThrown(thrown: unknown): HostReading {
  return { thrown, failure: thrown, passThrough: false, retryable: undefined };
}

function isPromise(value: unknown): value is Promise<unknown> {
  try {
    return value instanceof Promise;
  } catch {
    return false; // a revoked Proxy
  }
}
