import type { RetryReflectOptions } from "@retry-reflect/core";

/**
 * The plugin options every scenario starts from: the documented defaults of the original Retry &
 * Reflect design (`maxRetries: 3`, `initialBackoffMs: 500`, ...), plus the
 * demo's tool effects and its excluded control-flow tool. Scenario 3 shortens the breaker reset.
 */
export const DEMO_PLUGIN_OPTIONS = {
  maxRetries: 3,
  initialBackoffMs: 500,
  backoffMultiplier: 2,
  maxBackoffMs: 30_000,
  circuitBreakerThreshold: 5,
  excludeTools: ["exit_loop"],
  toolEffects: { send_email: "write" },
} as const satisfies RetryReflectOptions;

/** The system prompt of the original Retry & Reflect quick start. */
export const SYSTEM_PROMPT = "You are a helpful assistant with access to external APIs.";
