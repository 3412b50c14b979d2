import { AttemptContext } from "../call/coarse-attempt.js";
import type { ToolContext } from "../config/options.js";
import { keepShape } from "../internal/keep-shape.js";

const CONTEXT = Symbol.for("retry-reflect.tool-context");

/**
 * The options a wrapped tool's own function receives for one attempt: the host's (the AI SDK's
 * execution options, the OpenAI Agents SDK's call details, the MCP SDK's request options), with the
 * attempt's signal under `signalKey` and the attempt's context for `getToolContext`: a copy, the
 * host's object left as it is. (A copy costs 25-100 ns, made as each V8 makes it fastest: see
 * `copied`; remembering the context of the host's own object in a `WeakMap` instead cost 165-210
 * ns a call, and more in collections: the healthy call of a wrapped AI SDK tool without a limit
 * took ~570 ns, against ~360 ns with the default limit's copy.)
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
  // The host's own signal stays as it is; the attempt's own signal replaces it.
  return copied(options, context, signal === given ? undefined : signalKey, signal) as O;
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
 * A copy of the options behind a proxy that makes the attempt's signal when the tool reads
 * `signalKey`. Until then the copy holds the options' own value of the key, or `undefined` when
 * they have none (the key is there, for a spread or `Object.keys`, before it is read).
 */
function withLazySignal<O extends object>(options: O | undefined, context: ToolContext, signalKey: string): O {
  const owned = options !== undefined && isEnumerable.call(options, signalKey);
  const next = copied(options, context, owned ? undefined : signalKey, undefined);
  return new Proxy(next, new LazySignal(context, signalKey)) as O;
}

/**
 * V8 12 and later (Node 22 and 24) copy an object by a spread and then take new keys fast; V8 11
 * (Node 20) makes an object that gets a key after a spread the slow way (0.8-1.6 µs a copy,
 * measured), and is fast with the keys first and the options assigned after (60-100 ns), which
 * V8 12 and 13 make two to three times slower than the spread (AI SDK execution options: 25 vs 79
 * ns on Node 24, 38 vs 136 ns on Node 22). Read once; elsewhere (no `process.versions.v8`) keys first.
 */
const SPREAD_FIRST = v8Major() >= 12;

function v8Major(): number {
  const version = (globalThis as { process?: { versions?: { v8?: unknown } } }).process?.versions?.v8;
  return typeof version === "string" ? Number.parseInt(version, 10) || 0 : 0;
}

/**
 * A copy of the options (their own enumerable keys; none when there are none) holding the attempt's
 * context, and `signal` under `signalKey` when a key is given (else the options' own value of it
 * stays as it is). Options that already carried a context (a wrapped tool passing its own options
 * on): this attempt's wins. Own keys named `__proto__` are copied as keys, never taken for the
 * prototype.
 */
export function copied(
  options: object | undefined,
  context: ToolContext,
  signalKey: string | undefined,
  signal: unknown,
  spreadFirst = SPREAD_FIRST,
): Record<PropertyKey, unknown> {
  if (spreadFirst) {
    const copy: Record<PropertyKey, unknown> = { ...options };
    copy[CONTEXT] = context;
    if (signalKey !== undefined) copy[signalKey] = signal;
    return copy;
  }
  // V8 11: the context key (and the signal key, when the options lack it) before the options' keys.
  const owned = signalKey !== undefined && options !== undefined && isEnumerable.call(options, signalKey);
  const head: Record<PropertyKey, unknown> = { [CONTEXT]: context };
  if (signalKey !== undefined && !owned) head[signalKey] = signal;
  if (options === undefined) return head;
  const copy = isEnumerable.call(options, "__proto__") ? { ...head, ...options } : Object.assign(head, options);
  if (copy[CONTEXT] !== context) copy[CONTEXT] = context;
  if (owned) copy[signalKey] = signal; // a key it has: set in place
  return copy;
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
