import type { Context, Span } from "@opentelemetry/api";

/** What the observer keeps about one logical call, from `onCallStart` to `onCallEnd`. Never exported. */
export interface CallState {
  /** The span the call's events go to. */
  readonly span: Span;
  /** True when this package opened the span (and so sets GenAI attributes and ends it). */
  readonly owned: boolean;
  /** The context with `span` active: the tool runs inside it. */
  readonly context: Context;
  /** Attempts run so far (for `spanPerAttempt`). */
  attempts: number;
}
