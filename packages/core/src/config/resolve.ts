import type { CircuitBreakerStore } from "../breaker/circuit-breaker-store.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { RetryReflectObserver } from "../events/events.js";
import { withDebugLogger } from "../events/notifier.js";
import type { IdempotencySettings } from "../idempotency/guarded-call.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import { InMemoryIdempotencyStore } from "../idempotency/in-memory-idempotency-store.js";
import type { ToolEffect } from "../outcome.js";
import { effect, optionsObject } from "./checks.js";
import { applyRows, IDEMPOTENCY_TABLE, OPTION_NAMES, PLUGIN_ROWS, TOOL_IDEMPOTENCY_NAMES, TOOL_POLICY_NAMES } from "./option-table.js";
import type { RetryReflectOptions } from "./options.js";
import { DEFAULT_POLICY, ownBreakerSetting, type ResolvedPolicy, resolvePolicy } from "./policy.js";

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

type PluginSettings = Omit<ResolvedOptions, keyof ResolvedPolicy | "policy" | "tools"> & {
  readonly tools: Readonly<Record<string, unknown>>;
  readonly idempotency: Readonly<Record<string, unknown>>;
};

/** Applies defaults and checks every option (the option table's rows); throws `InvalidOptionError` naming the option and the value. */
export function resolveOptions(options: RetryReflectOptions = {}): ResolvedOptions {
  const input = optionsObject(options, "options", OPTION_NAMES, "");
  const plugin = applyRows<PluginSettings>(PLUGIN_ROWS, input, undefined, "");
  const policy = resolvePolicy(input, plugin.idempotency, DEFAULT_POLICY, "");
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
    const toolIdempotency = optionsObject(toolInput.idempotency, `${prefix}idempotency`, TOOL_IDEMPOTENCY_NAMES);
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
      store:
        store === undefined
          ? new InMemoryIdempotencyStore({ clock: plugin.clock })
          : IDEMPOTENCY_TABLE.store.check(store, "idempotency.store"),
    },
  };
}
