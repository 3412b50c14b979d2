import { DEFAULT_OPTIONS, type RetryReflectOptions } from "@retry-reflect/core";

/**
 * The plugin options every scenario starts from: the library's defaults, plus the demo's tool
 * effects and its excluded control-flow tool. A scenario adds its own on top (`pluginOptions`):
 * scenario 3 its breaker's threshold and shortened times, scenario 7 its report's time limit.
 */
export const DEMO_PLUGIN_OPTIONS = {
  excludeTools: ["exit_loop"],
  toolEffects: { send_email: "write" },
} as const satisfies RetryReflectOptions;

/** The defaults the scenarios rely on, as the header says them (read from the library, so they stay true): two lines. */
export function describeDefaults(): [string, string] {
  const budget = DEFAULT_OPTIONS.retryBudget;
  return [
    [
      `maxRetries=${DEFAULT_OPTIONS.maxRetries}`,
      `initialBackoffMs=${DEFAULT_OPTIONS.initialBackoffMs}`,
      `backoffMultiplier=${DEFAULT_OPTIONS.backoffMultiplier}`,
      `maxBackoffMs=${DEFAULT_OPTIONS.maxBackoffMs}`,
      `patienceMs=${DEFAULT_OPTIONS.patienceMs}`,
      `giveUpMs=${DEFAULT_OPTIONS.giveUpMs}`,
      `waitForRecovery=${DEFAULT_OPTIONS.waitForRecovery}`,
    ].join(" "),
    [
      `circuitBreakerThreshold=${DEFAULT_OPTIONS.circuitBreakerThreshold}`,
      `circuitBreakerResetMs=${DEFAULT_OPTIONS.circuitBreakerResetMs}`,
      `attemptTimeoutMs=[${DEFAULT_OPTIONS.attemptTimeoutMs.join(", ")}]`,
      budget === undefined
        ? "retryBudget=off"
        : `retryBudget={ratio: ${budget.ratio}, minPerSecond: ${budget.minPerSecond}, windowMs: ${budget.windowMs}}`,
    ].join(" "),
  ];
}

/** The system prompt of the original Retry & Reflect quick start. */
export const SYSTEM_PROMPT = "You are a helpful assistant with access to external APIs.";
