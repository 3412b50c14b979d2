import { AttemptContext } from "../call/coarse-attempt.js";
import type { ToolContext } from "../config/options.js";
import { keepShape } from "../internal/keep-shape.js";

const CONTEXT = Symbol.for("retry-reflect.tool-context");

/**
 * The options a wrapped tool's own function receives for one attempt: the host's (the AI SDK's
 * execution options, the OpenAI Agents SDK's call details, the MCP SDK's request options), with the
 * attempt's signal under `signalKey` and the attempt's context for `getToolContext`: a copy, the
 * host's object left as it is. (A copy costs 55-75 ns, measured on Node 20 and 24; remembering the
 * context of the host's own object in a `WeakMap` instead cost 165-210 ns a call, and more in
 * collections: the healthy call of a wrapped AI SDK tool without a limit took ~570 ns, against
 * ~360 ns with the default limit's copy.)
 *
 * Under the default time limit the attempt's signal is made only if the tool reads it (an
 * `AbortSignal` costs 3-4 µs on Node 20, and a property accessor on the copy 0.2-0.4 µs): the copy
 * is then behind a proxy that makes the signal on the first read of `signalKey` (see `LazySignal`).
 */
export function withToolContext<O extends object>(options: O, context: ToolContext, signalKey: string): O;
/** Options the host may leave out (the MCP SDK's request options): none stay none when the attempt's signal is the caller's. */
export function withToolContext<O extends object>(options: O | undefined, context: ToolContext, signalKey: string): O | undefined;
export function withToolContext<O extends object>(options: O | undefined, context: ToolContext, signalKey: string): O | undefined {
  if (context instanceof AttemptContext) return withLazySignal(options, context, signalKey);
  const given = (options as Record<string, unknown> | undefined)?.[signalKey] as AbortSignal | undefined;
  const signal = context.signal ?? given;
  if (options === undefined) return signal === undefined ? undefined : ({ [CONTEXT]: context, [signalKey]: signal } as O);
  // The context key first: on Node 20 (V8 11.3) a key added after a spread costs 1-3 µs per object.
  const next = (signal === given ? withKeyFirst(options, context) : { [CONTEXT]: context, ...options, [signalKey]: signal }) as O & {
    [CONTEXT]: ToolContext;
  };
  // Options that already carried a context (a wrapped tool passing its own options on): this attempt's wins.
  if (next[CONTEXT] !== context) next[CONTEXT] = context;
  return next;
}

/**
 * What a copy with a lazy signal answers: the attempt's signal is made when the tool first reads the
 * key (or its descriptor, or makes the copy non-extensible), and then written into the copy, which
 * from then on is a plain object behind the proxy. The tool's own assignment, definition or
 * deletion of the key needs no signal: the key is the tool's from then on. One per copy.
 */
class LazySignal implements ProxyHandler<Record<PropertyKey, unknown>> {
  private pending = true;

  constructor(
    private readonly context: ToolContext,
    private readonly signalKey: string,
  ) {}

  get(target: Record<PropertyKey, unknown>, key: PropertyKey, receiver: unknown): unknown {
    if (this.pending && key === this.signalKey) this.make(target);
    return Reflect.get(target, key, receiver);
  }

  getOwnPropertyDescriptor(target: Record<PropertyKey, unknown>, key: PropertyKey): PropertyDescriptor | undefined {
    if (this.pending && key === this.signalKey) this.make(target);
    return Reflect.getOwnPropertyDescriptor(target, key);
  }

  set(target: Record<PropertyKey, unknown>, key: PropertyKey, value: unknown, receiver: unknown): boolean {
    if (key === this.signalKey) this.pending = false;
    return Reflect.set(target, key, value, receiver);
  }

  /** A definition that leaves the value as it is (`configurable: false` alone) keeps the attempt's signal: made first. */
  defineProperty(target: Record<PropertyKey, unknown>, key: PropertyKey, descriptor: PropertyDescriptor): boolean {
    if (this.pending && key === this.signalKey) this.make(target);
    return Reflect.defineProperty(target, key, descriptor);
  }

  deleteProperty(target: Record<PropertyKey, unknown>, key: PropertyKey): boolean {
    if (key === this.signalKey) this.pending = false;
    return Reflect.deleteProperty(target, key);
  }

  /** Frozen or sealed, the copy must hold its signal: made first. */
  preventExtensions(target: Record<PropertyKey, unknown>): boolean {
    if (this.pending) this.make(target);
    return Reflect.preventExtensions(target);
  }

  private make(target: Record<PropertyKey, unknown>): void {
    this.pending = false;
    target[this.signalKey] = this.context.signal;
  }
}

// One kept: see `keepShape`.
keepShape(new LazySignal(undefined as never, "signal"));

const isEnumerable = Object.prototype.propertyIsEnumerable;

/**
 * A copy of the options (the context key first, then the options' own enumerable keys, in order)
 * behind a proxy that makes the attempt's signal when the tool reads `signalKey`. Until then the
 * copy holds the options' own value of the key, or `undefined` first among the keys when they have
 * none (not last: on Node 20 a key added after a spread costs 0.1-3 µs per object).
 */
function withLazySignal<O extends object>(options: O | undefined, context: ToolContext, signalKey: string): O {
  const next = (
    options !== undefined && isEnumerable.call(options, signalKey)
      ? { [CONTEXT]: context, ...options }
      : withKeyFirst(options, context, signalKey)
  ) as O & {
    [CONTEXT]: ToolContext;
  };
  // Options that already carried a context (a wrapped tool passing its own options on): this attempt's wins.
  if (next[CONTEXT] !== context) next[CONTEXT] = context;
  return new Proxy(next as Record<PropertyKey, unknown>, new LazySignal(context, signalKey)) as O;
}

/**
 * `{ [CONTEXT]: context, [signalKey]: undefined, ...options }` (without `signalKey`: `{ [CONTEXT]:
 * context, ...options }`), built without a computed key in the literal (which V8 makes the slow way:
 * 0.14 µs for the OpenAI Agents SDK's call details, 0.09-0.10 µs so, Node 20 and 24); a spread where
 * the options own a `__proto__` key, which `Object.assign` would take for the prototype.
 */
function withKeyFirst(options: object | undefined, context: ToolContext, signalKey?: string): Record<PropertyKey, unknown> {
  const head: Record<PropertyKey, unknown> = { [CONTEXT]: context };
  if (signalKey !== undefined) head[signalKey] = undefined;
  // No options (the MCP SDK's request options left out): the head alone, no empty object to copy.
  if (options === undefined) return head;
  return isEnumerable.call(options, "__proto__") ? { ...head, ...options } : Object.assign(head, options);
}

/**
 * Runs `call` with the host's own options object lent the attempt's signal (under `signalKey`) and
 * context, and gives its values back once `call` returns (a key it lacked stays, `undefined`): for a host whose function
 * copies the options (every key read) before any `await`, and knows the object by its identity
 * (Mastra's `Tool.execute` spreads its context, and skips validating the input again only for the
 * context object its builder validated it for). The tool's function sees the host's copy, which
 * keeps the attempt's signal and context.
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
    // Given back by assignment, not `delete`: a key the object lacked stays, `undefined` (which
    // every read takes for absent). A delete made the object a slow dictionary on Node 24's V8
    // (in either order), and cost 0.3 µs a key, measured: 0.6 µs of Mastra's 1.8 µs overhead.
    if (signal !== given) target[signalKey] = given;
    target[CONTEXT] = givenContext;
  }
}

/**
 * The core's `ToolContext` of this attempt (`{ attempt, signal, idempotencyKey?, toolName,
 * callId }`), read from the options a tool's function was given by an adapter (the AI SDK's
 * execution options, the OpenAI Agents SDK's call details); `undefined` elsewhere. A `write` tool
 * forwards `idempotencyKey` downstream (an `Idempotency-Key` header).
 */
export function getToolContext(options: unknown): ToolContext | undefined {
  if (typeof options !== "object" || options === null) return undefined;
  return (options as { [CONTEXT]?: ToolContext })[CONTEXT];
}
