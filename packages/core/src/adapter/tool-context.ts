import type { ToolContext } from "../config/options.js";

const CONTEXT = Symbol.for("retry-reflect.tool-context");

/**
 * The options a wrapped tool's own function receives for one attempt: the host's (the AI SDK's
 * execution options, the OpenAI Agents SDK's call details, the MCP SDK's request options), with the
 * attempt's signal under `signalKey` and the attempt's context for `getToolContext`: a copy, the
 * host's object left as it is.
 */
export function withToolContext<O extends object>(options: O, context: ToolContext, signalKey: string): O;
/** Options the host may leave out (the MCP SDK's request options): none stay none when the attempt's signal is the caller's. */
export function withToolContext<O extends object>(options: O | undefined, context: ToolContext, signalKey: string): O | undefined;
export function withToolContext<O extends object>(options: O | undefined, context: ToolContext, signalKey: string): O | undefined {
  const given = (options as Record<string, unknown> | undefined)?.[signalKey] as AbortSignal | undefined;
  const signal = context.signal ?? given;
  if (options === undefined && signal === undefined) return undefined;
  // A spread copies an own key named `__proto__` as a key, never taking it for the prototype; a
  // context the options already carried (a wrapped tool passing its own on) gives way to this attempt's.
  const copy: Record<PropertyKey, unknown> = { ...options, [CONTEXT]: context };
  // The host's own signal stays as it is; the attempt's own signal replaces it.
  if (signal !== given) copy[signalKey] = signal;
  return copy as O;
}

/**
 * Runs `call` with the host's own options object lent the attempt's signal (under `signalKey`) and
 * context, given back once `call` returns (a key it lacked stays, `undefined`): for a host whose
 * function copies the options before any `await` and knows the object by its identity (Mastra's
 * `Tool.execute` skips validating the input again only for the context object it validated it for).
 */
export function lendToolContext<O extends object, R>(options: O, context: ToolContext, signalKey: string, call: (options: O) => R): R {
  const target = options as Record<PropertyKey, unknown>;
  const given = target[signalKey];
  const signal = context.signal ?? (given as AbortSignal | undefined);
  const givenContext = target[CONTEXT];
  target[CONTEXT] = context;
  if (signal !== given) target[signalKey] = signal;
  try {
    return call(options);
  } finally {
    // Given back by assignment: a key the object lacked stays, `undefined` (which every read takes for absent).
    if (signal !== given) target[signalKey] = given;
    target[CONTEXT] = givenContext;
  }
}

/**
 * The core's `ToolContext` of this attempt, read from the options a tool's function was given by an
 * adapter (the AI SDK's execution options, the OpenAI Agents SDK's call details); `undefined`
 * elsewhere. A `write` tool forwards `idempotencyKey` downstream (an `Idempotency-Key` header).
 */
export function getToolContext(options: unknown): ToolContext | undefined {
  if (typeof options !== "object" || options === null) return undefined;
  return (options as { [CONTEXT]?: ToolContext })[CONTEXT];
}
