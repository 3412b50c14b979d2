import type { Jitter } from "../backoff/backoff.js";
import type { CircuitBreakerStore } from "../breaker/circuit-breaker-store.js";
import type { RetryBudgetSettings } from "../budget/retry-budget.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { ToolError } from "../errors/tool-error.js";
import type { RetryReflectObserver } from "../events/events.js";
import { withDebugLogger } from "../events/notifier.js";
import type { IdempotencySettings } from "../idempotency/guarded-call.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import { InMemoryIdempotencyStore } from "../idempotency/in-memory-idempotency-store.js";
import type { ToolEffect } from "../outcome.js";
import type { ReflectionTemplate } from "../texts/templater.js";
import { effect, idempotencyStore, optionsObject } from "./checks.js";
import { IDEMPOTENCY_TABLE, OPTION_NAMES, OPTION_TABLE, type OptionRow } from "./option-table.js";
import type { ClassifyContext, FailureContext, PolicyOptions, RetryReflectOptions, ToolCall, ToolPolicy } from "./options.js";

/** The settings one tool's calls use: the plugin's options with the tool's policy applied, defaults filled in. */
export interface ResolvedPolicy {
  readonly maxRetries: number;
  readonly initialBackoffMs: number;
  readonly backoffMultiplier: number;
  readonly maxBackoffMs: number;
  readonly jitter: Jitter;
  /** The attempt limits (`attemptTimeoutMs`), one per attempt of a failing row, the last for every later one; empty: none. */
  readonly attemptTimeoutsMs: readonly number[];
  /** Whether the limits are the default ones (`attemptTimeoutMs` not set). */
  readonly defaultLimit: boolean;
  readonly patienceMs: number;
  readonly giveUpMs: number;
  readonly waitForRecovery: boolean;
  readonly shouldRetry: ((error: ToolError, context: FailureContext) => boolean | undefined) | undefined;
  readonly isFailure: ((result: unknown, context: FailureContext) => boolean | ToolError | undefined) | undefined;
  readonly maxConcurrent: number | undefined;
  readonly repeatedCallLimit: number | undefined;
  readonly exhaustedResetMs: number;
  /** The tool's retry budget; undefined: none. */
  readonly retryBudget: RetryBudgetSettings | undefined;
  readonly fallback: ((call: ToolCall, error: ToolError) => unknown) | undefined;
  readonly circuitBreakerThreshold: number;
  readonly circuitBreakerResetMs: number;
  readonly circuitBreakerFailureRate: number | undefined;
  readonly circuitBreakerMinimumCalls: number;
  readonly circuitBreakerWindowMs: number;
  readonly circuitBreakerMaxResetMs: number | undefined;
  readonly circuitBreakerCountsInvalidArguments: boolean;
  readonly reflectionPrompt: string;
  /** The compiled `reflectionPrompt`. */
  readonly template: ReflectionTemplate;
  /** The text of a call that did not run or is still running (`retryLaterPrompt`). */
  readonly retryLaterTemplate: ReflectionTemplate;
  /** Compiled stop texts; undefined: the built-in text. */
  readonly exhaustedTemplate: ReflectionTemplate | undefined;
  readonly notRecoverableTemplate: ReflectionTemplate | undefined;
  readonly circuitOpenTemplate: ReflectionTemplate | undefined;
  readonly classifyError: ((error: unknown, context: ClassifyContext) => ToolError | undefined) | undefined;
  readonly idempotency: IdempotencySettings;
}

/** Options after defaults and validation: the plugin's policy (its fields, and as `policy`), each tool's, and the plugin-wide settings. */
export interface ResolvedOptions extends ResolvedPolicy {
  /** The plugin's policy: what a tool without one of its own uses. */
  readonly policy: ResolvedPolicy;
  /** Each configured tool's policy (`tools`), the plugin's with the tool's fields applied. */
  readonly tools: ReadonlyMap<string, ResolvedPolicy>;
  readonly circuitBreakerKey: RetryReflectOptions["circuitBreakerKey"];
  readonly maxCircuitBreakers: number;
  readonly circuitBreakerStore: CircuitBreakerStore | undefined;
  readonly includeTools: ReadonlySet<string>;
  readonly excludeTools: ReadonlySet<string>;
  /** Effects by tool name, `tools[name].effect` merged in. */
  readonly toolEffects: Readonly<Record<string, ToolEffect>>;
  readonly defaultEffect: ToolEffect;
  readonly idempotency: IdempotencySettings & { readonly store: IdempotencyStore };
  readonly trackingScope: "scope" | "global";
  readonly maxAttemptCounters: number;
  readonly onExhausted: "return" | "throw";
  readonly maxErrorLength: number;
  readonly redact: (text: string) => string;
  readonly observers: readonly RetryReflectObserver[];
  readonly clock: NonNullable<RetryReflectOptions["clock"]>;
  readonly random: () => number;
}

/** Options as given, or a part of them (a tool's policy, idempotency settings). */
type Input = Readonly<Record<string, unknown>>;

type PluginSettings = Omit<ResolvedOptions, keyof ResolvedPolicy | "policy" | "tools"> & { tools: Input; idempotency: Input };

type Rows = ReadonlyArray<readonly [name: string, row: OptionRow]>;
const rowsOf = (table: Readonly<Record<string, OptionRow>>, perTool: boolean): Rows =>
  Object.entries(table).filter(([, row]) => (row.perTool === true) === perTool);
const namesOf = (rows: Rows) => rows.map(([name]) => name);

/** The options a tool's policy may set (`PolicyOptions`); the plugin's own; the idempotency settings a tool may set (all but the store). */
const POLICY_ROWS = rowsOf(OPTION_TABLE, true);
const PLUGIN_ROWS = rowsOf(OPTION_TABLE, false);
const TOOL_IDEMPOTENCY_ROWS = rowsOf(IDEMPOTENCY_TABLE, true);
/** What a tool's policy may hold: its options, its effect (one setting with `toolEffects[name]`) and its idempotency settings. */
const TOOL_POLICY_NAMES = [...namesOf(POLICY_ROWS), ...(["effect", "idempotency"] satisfies (keyof ToolPolicy)[])];
/** The settings a breaker is made from. */
const BREAKER_SETTINGS = POLICY_ROWS.filter(([, row]) => row.breaker).map(([name]) => name as keyof PolicyOptions & keyof ResolvedPolicy);

/** The rows applied to `input`: a given value checked, another the `base`'s (the plugin's policy, for a tool's), else the default. */
function applyRows<Resolved>(rows: Rows, input: Input, base: object | undefined, prefix: string): Resolved {
  const resolved: Record<string, unknown> = {};
  for (const [name, row] of rows) {
    const field = row.into ?? name;
    const inherited = (base as Record<string, unknown> | undefined)?.[field];
    let given = input[name];
    // `=== undefined`, not `??`: an explicit null is an invalid value, not "use the default".
    if (given === undefined && base === undefined) given = "default" in row ? row.default : row.builtIn;
    const check = row.check as (value: unknown, name: string, inherited: unknown) => unknown;
    const value = given === undefined ? inherited : check(given, prefix + name, inherited);
    const floor = row.atLeast === undefined ? undefined : (resolved[row.atLeast] as number);
    if (floor !== undefined && value !== undefined && (value as number) < floor) {
      throw new InvalidOptionError(prefix + name, value, `a number >= ${row.atLeast} (${floor})`);
    }
    resolved[field] = value;
  }
  return resolved as Resolved;
}

/** A policy: the plugin's (no `base`: the defaults under it), or a tool's on top of the plugin's. */
function resolvePolicy(input: Input, idempotency: Input, base: ResolvedPolicy | undefined, prefix: string): ResolvedPolicy {
  const policy = applyRows<Omit<ResolvedPolicy, "reflectionPrompt" | "defaultLimit" | "idempotency">>(POLICY_ROWS, input, base, prefix);
  return {
    ...policy,
    reflectionPrompt: policy.template.source,
    defaultLimit: input.attemptTimeoutMs === undefined && (base?.defaultLimit ?? true),
    idempotency: applyRows<IdempotencySettings>(TOOL_IDEMPOTENCY_ROWS, idempotency, base?.idempotency, `${prefix}idempotency.`),
  };
}

/** The first breaker setting in which a tool's policy differs from the plugin's, or undefined: then it shares the plugin's breaker. */
export function ownBreakerSetting(policy: ResolvedPolicy, plugin: ResolvedPolicy): keyof PolicyOptions | undefined {
  return BREAKER_SETTINGS.find((setting) => policy[setting] !== plugin[setting]);
}

/** Applies defaults and checks every option (the option table's rows); throws `InvalidOptionError` naming the option and the value. */
export function resolveOptions(options: RetryReflectOptions = {}): ResolvedOptions {
  const input = optionsObject(options, "options", OPTION_NAMES, "");
  const plugin = applyRows<PluginSettings>(PLUGIN_ROWS, input, undefined, "");
  const policy = resolvePolicy(input, plugin.idempotency, undefined, "");
  const toolEffects = plugin.toolEffects as Record<string, ToolEffect>;
  const tools = new Map<string, ResolvedPolicy>();
  for (const [toolName, raw] of Object.entries(plugin.tools)) {
    const prefix = `tools.${toolName}.`;
    const toolInput = optionsObject(raw, `tools.${toolName}`, TOOL_POLICY_NAMES);
    if (toolInput.effect !== undefined) {
      const own = effect(toolInput.effect, `${prefix}effect`);
      const declared = toolEffects[toolName];
      if (declared !== undefined && declared !== own) {
        throw new InvalidOptionError(
          `${prefix}effect`,
          own,
          `the effect toolEffects.${toolName} gives ("${declared}"): they are one setting`,
        );
      }
      toolEffects[toolName] = own;
    }
    const toolIdempotency = optionsObject(toolInput.idempotency, `${prefix}idempotency`, namesOf(TOOL_IDEMPOTENCY_ROWS));
    const toolPolicy = resolvePolicy(toolInput, toolIdempotency, policy, prefix);
    const own = ownBreakerSetting(toolPolicy, policy);
    if (own !== undefined && plugin.circuitBreakerKey !== undefined) {
      // A tool with breaker settings of its own has a breaker of its own, found by tool name; the
      // keys of `circuitBreakerKey` are not tool names, so `plugin.circuits` could not find them.
      throw new InvalidOptionError(
        `${prefix}${own}`,
        toolInput[own],
        "no breaker setting of its own while circuitBreakerKey is set (set it for the plugin instead)",
      );
    }
    tools.set(toolName, toolPolicy);
  }
  const store = plugin.idempotency.store;
  return {
    ...policy,
    ...plugin,
    observers: withDebugLogger(plugin.observers),
    policy,
    tools,
    toolEffects,
    idempotency: {
      ...policy.idempotency,
      store: store === undefined ? new InMemoryIdempotencyStore({ clock: plugin.clock }) : idempotencyStore(store, "idempotency.store"),
    },
  };
}
