import { boolean, effect, effects } from "../config/checks.js";
import type { RetryReflectOptions } from "../config/options.js";
import { isNonArrayObject, isObject } from "../errors/error-codes.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { ToolEffect } from "../outcome.js";
import { RetryReflectPlugin } from "../plugin.js";

/** Is `value` a tool effect (`"read"`, `"idempotent"` or `"write"`)? */
export function isToolEffect(value: unknown): value is ToolEffect {
  return value === "read" || value === "idempotent" || value === "write";
}

export { isObject as isRecord } from "../errors/error-codes.js";

/** An object literal (or one made with `Object.create(null)`): not an array, not a class instance. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isNonArrayObject(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * An adapter's `pluginOrOptions` argument as a plugin: the plugin given (from any copy of the core),
 * or one made from the options object given (which the plugin checks). Anything else (`null`, a
 * number, an array, `undefined`) throws `InvalidOptionError` naming `pluginOrOptions`.
 */
export function pluginOf(pluginOrOptions: unknown): RetryReflectPlugin {
  if (isPlugin(pluginOrOptions)) return pluginOrOptions;
  if (!isNonArrayObject(pluginOrOptions)) {
    throw new InvalidOptionError("pluginOrOptions", pluginOrOptions, "a RetryReflectPlugin or a RetryReflectOptions object");
  }
  return RetryReflectPlugin.create(pluginOrOptions as RetryReflectOptions);
}

/** `value` as a tool effect; anything else throws `InvalidOptionError` naming `option` (`effect`, `toolEffects.send_email`). */
export function checkEffect(option: string, value: unknown): ToolEffect {
  return effect(value, option);
}

/** The forms an adapter's `scope` / `namespace` option takes: a function of the call only, or also one fixed non-empty string. */
export type ScopeOptionForms = "function" | "string or function";

/** Checks a `scope` or `namespace` option (`undefined`: the default); anything `forms` does not allow throws `InvalidOptionError`. */
export function checkScopeOption(option: "scope" | "namespace", value: unknown, forms: ScopeOptionForms): void {
  if (value === undefined || typeof value === "function") return;
  if (forms === "function") throw new InvalidOptionError(option, value, "a function");
  if (typeof value !== "string" || value === "") {
    throw new InvalidOptionError(option, value, "a non-empty string or a function of the call");
  }
}

/**
 * A fresh random scope for one wrapper (`prefix/<uuid>`): never a process-local counter, since a
 * scope is also the default namespace of stored write results and goes into derived keys, which a
 * shared store (Redis) compares across processes and restarts.
 */
export function randomScope(prefix: string): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  const id =
    typeof crypto?.randomUUID === "function"
      ? crypto.randomUUID()
      : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  return `${prefix}/${id}`;
}

/**
 * The options of an adapter whose tools may carry MCP annotations (AI SDK, Mastra, MCP); `Ask` is
 * its function form of `scope`/`namespace` (what it sees of a call is the adapter's). An adapter
 * whose default differs (Mastra: one scope per run) says so where it declares the option again.
 */
export interface AnnotatedToolOptions<Ask> {
  /**
   * The attempt-tracking scope of a call: retries, reflections and the backoff gate are counted per
   * (scope, tool). A string, or a function of the call (asked only when the plugin needs a scope).
   * @default one random scope per wrapping (each `withRetryReflect` call): wrap per agent run, or pass a function, for per-run budgets
   */
  readonly scope?: string | Ask;
  /**
   * Whose writes these are: a stored write result is replayed only to a call of the same namespace
   * (pass the conversation, request or tenant id: tools wrapped once may serve every user). A
   * string, or a function of the call (asked only for a `write`).
   * @default the `scope` option's scope; without one, the call's run's where the host tells it (the AI SDK: from the step's messages), else the call's own: never the wrapper's, so that one wrapper shared by every user replays nothing across users
   */
  readonly namespace?: string | Ask;
  /**
   * `"read"`, `"idempotent"` or `"write"` per tool name; wins over the plugin's `toolEffects`,
   * `tools[name].effect`, the tool's annotations and `defaultEffect`.
   * @default {}
   */
  readonly toolEffects?: Readonly<Record<string, ToolEffect>>;
  /**
   * Read a tool's effect from its MCP annotations (`readOnlyHint`, `idempotentHint`,
   * `destructiveHint`: a server's tool annotations, or `metadata.annotations` of the tools
   * `@ai-sdk/mcp`'s `createMCPClient().tools()` returns) when no `toolEffects` names it. The MCP
   * spec calls them hints that an untrusted server may get wrong: set `false` for such a server
   * (then the plugin's `defaultEffect` applies). @default true
   */
  readonly trustAnnotations?: boolean;
}

/** The options every adapter's tools take: `scope`, `namespace`, `toolEffects`, and one boolean of the adapter's own. */
export type CheckedScopedToolOptions<Ask, Flag extends string> = {
  readonly scope: string | Ask | undefined;
  readonly namespace: string | Ask | undefined;
  readonly toolEffects: Readonly<Record<string, ToolEffect>>;
} & { readonly [name in Flag]: boolean };

/**
 * Checks an adapter's options once: `scope` and `namespace` a non-empty string or a function,
 * `toolEffects` effects by tool name, and the adapter's one boolean `flag` (`trustAnnotations`,
 * `hideOpenCircuits`; `defaultValue` when not given); an unknown or invalid one throws `InvalidOptionError`.
 */
export function checkScopedToolOptions<Ask, Flag extends string>(
  given: unknown,
  flag: Flag,
  defaultValue: boolean,
): CheckedScopedToolOptions<Ask, Flag> {
  const names = ["scope", "namespace", "toolEffects", flag];
  if (given !== undefined && !isPlainObject(given)) {
    throw new InvalidOptionError("adapterOptions", given, `an object ({ ${names.map((name) => `${name}?`).join(", ")} })`);
  }
  const options = given ?? {};
  for (const key of Object.keys(options)) {
    if (!names.includes(key)) {
      const expected = `a known adapter option (one of ${names.join(", ")}); the plugin's options go in the second argument`;
      throw new InvalidOptionError(key, options[key], expected);
    }
  }
  const { scope, namespace, toolEffects } = options;
  checkScopeOption("scope", scope, "string or function");
  checkScopeOption("namespace", namespace, "string or function");
  // Copied without a prototype, so that a tool named `toString` or `__proto__` has no effect unless given one.
  if (toolEffects !== undefined && !isPlainObject(toolEffects)) throw new InvalidOptionError("toolEffects", toolEffects, "an object");
  return {
    scope: scope as string | Ask | undefined,
    namespace: namespace as string | Ask | undefined,
    toolEffects: effects(toolEffects ?? {}, "toolEffects"),
    [flag]: options[flag] === undefined ? defaultValue : boolean(options[flag], flag),
  } as CheckedScopedToolOptions<Ask, Flag>;
}

/** {@link AnnotatedToolOptions}, checked: `toolEffects` copied without a prototype (empty when not given), `trustAnnotations` defaulted. */
export type CheckedAnnotatedToolOptions<Ask> = CheckedScopedToolOptions<Ask, "trustAnnotations">;

/** {@link checkScopedToolOptions} with `trustAnnotations` (default true). */
export function checkAnnotatedToolOptions<Ask>(given: unknown): CheckedAnnotatedToolOptions<Ask> {
  return checkScopedToolOptions<Ask, "trustAnnotations">(given, "trustAnnotations", true);
}

/** A `RetryReflectPlugin` (from any copy of the core), as opposed to an options object: what an adapter's `pluginOrOptions` holds. */
export function isPlugin(value: unknown): value is RetryReflectPlugin {
  return isObject(value) && ["execute", "isInScope", "circuitState"].every((method) => typeof value[method] === "function");
}

/** MCP tool annotations (all hints, per the MCP spec); adapters read the three effect hints. */
export interface EffectHints {
  readonly title?: string;
  readonly openWorldHint?: boolean;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
}

/**
 * The effect MCP tool annotations suggest, or undefined when they say nothing:
 * `readOnlyHint: true` → `"read"`; else `idempotentHint: true` → `"idempotent"` (repeating it
 * changes nothing more, even when destructive); else `destructiveHint: true` or `readOnlyHint: false`
 * → `"write"` (the spec's defaults for a tool that is not read-only: destructive, not idempotent).
 * Anything that is not an object of hints says nothing.
 */
export function effectOfAnnotations(annotations: EffectHints | undefined): ToolEffect | undefined {
  if (typeof annotations !== "object" || annotations === null) return undefined;
  if (annotations.readOnlyHint === true) return "read";
  if (annotations.idempotentHint === true) return "idempotent";
  if (annotations.destructiveHint === true || annotations.readOnlyHint === false) return "write";
  return undefined;
}

/**
 * Whether a host tool's schema (zod 3 and 4, classic and mini; JSON Schema, also inside the AI SDK's
 * `jsonSchema()` and MCP's `inputSchema`) is an object schema whose properties hold `field`;
 * undefined when it cannot be told (no schema, another shape, a schema that throws when read, one
 * given as a promise): the plugin's own rule then applies.
 */
export function declaresField(schema: unknown, field: string): boolean | undefined {
  try {
    return declares(schema, field, 0);
  } catch {
    return undefined; // a getter or a proxy trap that throws: not a schema to read
  }
}

function declares(schema: unknown, field: string, depth: number): boolean | undefined {
  if (!isObject(schema) || depth > 4) return undefined;
  // zod 4 (classic and mini): `_zod.def`, an object's `shape` a record of its fields.
  const zod4 = isObject(schema._zod) ? schema._zod.def : undefined;
  if (isObject(zod4)) return zod4.type === "object" && isObject(zod4.shape) ? Object.hasOwn(zod4.shape, field) : undefined;
  // zod 3: `_def.typeName`, an object's shape a function (or a record).
  const zod3 = schema._def;
  if (isObject(zod3) && typeof zod3.typeName === "string") {
    if (zod3.typeName !== "ZodObject") return undefined;
    const shape = typeof zod3.shape === "function" ? (zod3.shape as () => unknown)() : zod3.shape;
    return isObject(shape) ? Object.hasOwn(shape, field) : undefined;
  }
  // The AI SDK's `jsonSchema(schema)`: the JSON Schema is its `jsonSchema` member (not a promise of one).
  if ("jsonSchema" in schema && !("properties" in schema)) {
    const inner = schema.jsonSchema;
    return isObject(inner) && typeof inner.then !== "function" ? declares(inner, field, depth + 1) : undefined;
  }
  // JSON Schema of an object (MCP's `inputSchema`).
  const { properties } = schema;
  if (isObject(properties)) return Object.hasOwn(properties, field);
  return schema.type === "object" ? false : undefined;
}

/** The idempotency key argument of a tool: its policy's `idempotency.keyField`, else the plugin's. */
export function keyFieldOf(plugin: RetryReflectPlugin, toolName: string): string {
  return (plugin.options.tools.get(toolName) ?? plugin.options).idempotency.keyField;
}

/** `ToolCall.declaresKey` of a host tool: only for a `write` (the only effect that reads it). */
export function declaresKey(
  plugin: RetryReflectPlugin,
  toolName: string,
  effect: string | undefined,
  schema: unknown,
): boolean | undefined {
  return effect === "write" ? declaresField(schema, keyFieldOf(plugin, toolName)) : undefined;
}
