import type { Counter, Histogram, Meter } from "@opentelemetry/api";
import {
  METRIC_GEN_AI_EXECUTE_TOOL_DURATION,
  METRIC_RETRY_REFLECT_CIRCUIT_REJECTIONS,
  METRIC_RETRY_REFLECT_CIRCUIT_TRANSITIONS,
  METRIC_RETRY_REFLECT_CIRCUIT_WAITS,
  METRIC_RETRY_REFLECT_IDEMPOTENCY_REPLAYS,
  METRIC_RETRY_REFLECT_REFLECTIONS,
  METRIC_RETRY_REFLECT_RETRIES,
  METRIC_RETRY_REFLECT_RETRY_BUDGET_SPENT,
} from "./semconv.js";

/** The metric instruments, created once per meter. */
export interface Instruments {
  readonly duration: Histogram;
  readonly retries: Counter;
  readonly reflections: Counter;
  readonly transitions: Counter;
  readonly rejections: Counter;
  readonly recoveryWaits: Counter;
  readonly replays: Counter;
  readonly budgetSpent: Counter;
}

/** Bucket boundaries in seconds: tool calls range from milliseconds to a minute of backoff. */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createInstruments(meter: Meter): Instruments {
  return {
    duration: meter.createHistogram(METRIC_GEN_AI_EXECUTE_TOOL_DURATION, {
      description: "Duration of a logical tool call, in-place retries and their backoff included.",
      unit: "s",
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS_SECONDS] },
    }),
    retries: meter.createCounter(METRIC_RETRY_REFLECT_RETRIES, {
      description: "Failed tool calls that will be retried, in place or through a reflection.",
      unit: "{retry}",
    }),
    reflections: meter.createCounter(METRIC_RETRY_REFLECT_REFLECTIONS, {
      description: "Tool calls that ended by handing the model a reflection prompt.",
      unit: "{reflection}",
    }),
    transitions: meter.createCounter(METRIC_RETRY_REFLECT_CIRCUIT_TRANSITIONS, {
      description: "Circuit breaker state changes, by the state entered.",
      unit: "{transition}",
    }),
    rejections: meter.createCounter(METRIC_RETRY_REFLECT_CIRCUIT_REJECTIONS, {
      description: "Tool calls rejected without running because the tool's circuit was open.",
      unit: "{rejection}",
    }),
    recoveryWaits: meter.createCounter(METRIC_RETRY_REFLECT_CIRCUIT_WAITS, {
      description: "Tool calls that met an open circuit and waited for its probe instead of being rejected.",
      unit: "{wait}",
    }),
    replays: meter.createCounter(METRIC_RETRY_REFLECT_IDEMPOTENCY_REPLAYS, {
      description: "Write tool calls answered from the idempotency store without running the tool.",
      unit: "{replay}",
    }),
    budgetSpent: meter.createCounter(METRIC_RETRY_REFLECT_RETRY_BUDGET_SPENT, {
      description: "Transient tool failures not retried in place because the tool's retry budget was spent.",
      unit: "{retry}",
    }),
  };
}
