import type { Attributes, Context, MeterProvider, Span, TracerProvider } from "@opentelemetry/api";
import type { CallEnd, CallInfo } from "@retry-reflect/core/events";

/**
 * `"span"`: open one `execute_tool {tool}` span per logical call.
 * `"active"`: add the events and `retry_reflect.*` attributes to the span that is already active
 * when the call starts (for LangChain tracing that opens its own tool spans); when no span is
 * active, a span is opened as in `"span"` mode.
 */
export type SpanMode = "span" | "active";

/**
 * What error text reaches telemetry. `"redacted"`: the cleaned text (a tool error's, cleaned by the
 * core; a thrown message, cleaned here with the core's `defaultRedactor`) in span statuses, span
 * events, exception events and log records. `"code-only"`: none at all, only codes
 * (`retry_reflect.error_code`, `error.type`, `exception.type`).
 */
export type ErrorTextMode = "redacted" | "code-only";

/** A log record as this package emits it; structurally a subset of `@opentelemetry/api-logs`' `LogRecord`. */
export interface OpenTelemetryLogRecord {
  /** `retry_reflect.<event type>`, e.g. `retry_reflect.retry`. */
  eventName?: string;
  /** 13 (WARN) or 9 (INFO). */
  severityNumber?: number;
  /** `"WARN"` or `"INFO"`. */
  severityText?: string;
  /** The verbatim message ("tool call failed, retrying"). */
  body?: string;
  attributes?: Attributes;
  /** The call's span context, so that back ends correlate the record with its trace. */
  context?: Context;
}

/** The part of an `@opentelemetry/api-logs` `Logger` this package uses. */
export interface OpenTelemetryLogger {
  emit(record: OpenTelemetryLogRecord): void;
}

/**
 * The part of an `@opentelemetry/api-logs` `LoggerProvider` this package uses: pass the SDK's
 * `LoggerProvider` (from `@opentelemetry/sdk-logs`). Declared structurally so that
 * `@opentelemetry/api-logs` stays optional.
 */
export interface OpenTelemetryLoggerProvider {
  getLogger(name: string, version?: string): OpenTelemetryLogger;
}

/** Options of `openTelemetryObserver`. Every field is optional. */
export interface OpenTelemetryObserverOptions {
  /** Where spans go. @default the global tracer provider (`trace.getTracerProvider()`) */
  readonly tracerProvider?: TracerProvider;
  /** Where metrics go. @default the global meter provider (`metrics.getMeterProvider()`), looked up at each record so that a provider registered later is used */
  readonly meterProvider?: MeterProvider;
  /** When given, each event is also emitted as a log record (WARN/INFO). @default undefined (no log records) */
  readonly loggerProvider?: OpenTelemetryLoggerProvider;
  /**
   * Record the tool's arguments (`gen_ai.tool.call.arguments`) and result
   * (`gen_ai.tool.call.result`) as JSON on the span. The fields named in `contentExcludeFields`
   * are removed from the arguments first, and the JSON goes through the core's `defaultRedactor`
   * (secret-named fields such as `api_key`, `token`, `password`; known token shapes; control
   * characters). @default false
   */
  readonly captureContent?: boolean;
  /** Argument fields never recorded, even with `captureContent`. @default ["idempotency_key"] */
  readonly contentExcludeFields?: readonly string[];
  /** Longest recorded argument or result JSON; longer text is cut and ends with `…[truncated]`. @default 4096 */
  readonly maxContentLength?: number;
  /**
   * `"redacted"`: error text on spans, events and log records is cleaned (secrets and control
   * characters removed). `"code-only"`: no error text at all (no `retry_reflect.error`, no status
   * message, no exception message or stack), only codes. @default "redacted"
   */
  readonly errorText?: ErrorTextMode;
  /** Open a span per call, or enrich the already active one. @default "span" */
  readonly spanMode?: SpanMode;
  /**
   * Also open one child span per attempt (`execute_tool {tool} attempt {n}`), in-place retries
   * included, so that each attempt's duration and failure show in the trace view. The error text
   * is not recorded on it (the call span's events carry the cleaned text). @default false
   */
  readonly spanPerAttempt?: boolean;
  /** Called after the call's span is started (or adopted, in `"active"` mode). A hook that throws is ignored. */
  readonly startHook?: (span: Span, call: CallInfo) => void;
  /** Called before the call's span is ended, with how the call ended. A hook that throws is ignored. */
  readonly endHook?: (span: Span, call: CallInfo, end: CallEnd) => void;
}
