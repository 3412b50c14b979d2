import { type Attributes, context, type MeterProvider, metrics, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { InvalidOptionError } from "@retry-reflect/core";
import { isReturnedFailure } from "@retry-reflect/core/adapter/failures";
import type { CallEnd, CallInfo, RetryReflectObserver } from "@retry-reflect/core/events";
import { version } from "../package.json";
import { serializeContent } from "./content.js";
import { circuitStateOfEvent, eventAttributes } from "./event-attributes.js";
import { errorTypeOf, finalErrorType, statusMessage, toException } from "./final-error.js";
import { createInstruments, type Instruments } from "./instruments.js";
import type { CallState } from "./internal-types.js";
import { recordCallMetrics, recordEventMetrics } from "./record-metrics.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DESCRIPTION,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_RETRY_REFLECT_ATTEMPT,
  ATTR_RETRY_REFLECT_ATTEMPT_INDEX,
  ATTR_RETRY_REFLECT_ATTEMPTS,
  ATTR_RETRY_REFLECT_CIRCUIT_STATE,
  ATTR_RETRY_REFLECT_ERROR_CODE,
  ATTR_RETRY_REFLECT_FAILURE_REASON,
  ATTR_RETRY_REFLECT_FALLBACK,
  ATTR_RETRY_REFLECT_OUTCOME,
  ATTR_RETRY_REFLECT_REPLAYED,
  ATTR_RETRY_REFLECT_SCOPE,
  ATTR_RETRY_REFLECT_TOOL_EFFECT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from "./semconv.js";
import type { ErrorTextMode, OpenTelemetryObserverOptions, SpanMode } from "./types.js";

/** The instrumentation scope name of every span, metric and log record of this package. */
export const INSTRUMENTATION_SCOPE_NAME = "@retry-reflect/otel";
/** The instrumentation scope version (this package's version). */
export const INSTRUMENTATION_SCOPE_VERSION: string = version;

/** The option defaults of `openTelemetryObserver`. */
export const OPEN_TELEMETRY_OBSERVER_DEFAULTS = {
  captureContent: false,
  contentExcludeFields: ["idempotency_key"] as readonly string[],
  errorText: "redacted" as ErrorTextMode,
  maxContentLength: 4096,
  spanMode: "span" as SpanMode,
  spanPerAttempt: false,
} as const;

const SEVERITY_NUMBER = { WARN: 13, INFO: 9 } as const;

/**
 * An observer that turns retry-reflect's calls and events into OpenTelemetry spans, span
 * events, metrics and (optionally) log records:
 * `RetryReflectPlugin.builder().observer(openTelemetryObserver()).build()`.
 */
export function openTelemetryObserver(options: OpenTelemetryObserverOptions = {}): RetryReflectObserver {
  const spanMode = options.spanMode ?? OPEN_TELEMETRY_OBSERVER_DEFAULTS.spanMode;
  if (spanMode !== "span" && spanMode !== "active") throw new InvalidOptionError("spanMode", spanMode, '"span" or "active"');
  const maxContentLength = options.maxContentLength ?? OPEN_TELEMETRY_OBSERVER_DEFAULTS.maxContentLength;
  if (!Number.isInteger(maxContentLength) || maxContentLength < 16) {
    throw new InvalidOptionError("maxContentLength", maxContentLength, "an integer >= 16");
  }
  const captureContent = options.captureContent ?? OPEN_TELEMETRY_OBSERVER_DEFAULTS.captureContent;
  const spanPerAttempt = options.spanPerAttempt ?? OPEN_TELEMETRY_OBSERVER_DEFAULTS.spanPerAttempt;
  if (typeof spanPerAttempt !== "boolean") throw new InvalidOptionError("spanPerAttempt", spanPerAttempt, "a boolean");
  const errorText = options.errorText ?? OPEN_TELEMETRY_OBSERVER_DEFAULTS.errorText;
  if (errorText !== "redacted" && errorText !== "code-only")
    throw new InvalidOptionError("errorText", errorText, '"redacted" or "code-only"');
  const excludeFields = options.contentExcludeFields ?? OPEN_TELEMETRY_OBSERVER_DEFAULTS.contentExcludeFields;
  const content = (value: unknown) => serializeContent(value, excludeFields, maxContentLength);

  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE_NAME, INSTRUMENTATION_SCOPE_VERSION);
  const logger = options.loggerProvider?.getLogger(INSTRUMENTATION_SCOPE_NAME, INSTRUMENTATION_SCOPE_VERSION);
  const calls = new WeakMap<CallInfo, CallState>();

  // The global meter API has no proxy: look the provider up each time, so that one registered
  // after this observer was created is still used; instruments are rebuilt only when it changes.
  let meterCache: { provider: MeterProvider; instruments: Instruments } | undefined;
  const instruments = (): Instruments => {
    const provider = options.meterProvider ?? metrics.getMeterProvider();
    if (meterCache?.provider !== provider) {
      meterCache = {
        provider,
        instruments: createInstruments(provider.getMeter(INSTRUMENTATION_SCOPE_NAME, INSTRUMENTATION_SCOPE_VERSION)),
      };
    }
    return meterCache.instruments;
  };

  const safely = (hook: () => void) => {
    try {
      hook();
    } catch {
      // A user hook must never break a tool call or leave a span open.
    }
  };

  return {
    onCallStart(call) {
      const parent = context.active();
      const active = spanMode === "active" ? trace.getSpan(parent) : undefined;
      let state: CallState;
      if (active?.isRecording()) {
        state = { span: active, owned: false, context: parent, attempts: 0 };
        active.setAttributes(callAttributes(call));
      } else {
        const span = tracer.startSpan(
          `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${call.toolName}`,
          {
            kind: SpanKind.INTERNAL,
            attributes: {
              [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
              [ATTR_GEN_AI_TOOL_NAME]: call.toolName,
              ...(call.callId === undefined ? {} : { [ATTR_GEN_AI_TOOL_CALL_ID]: call.callId }),
              ...callAttributes(call),
            },
          },
          parent,
        );
        state = { span, owned: true, context: trace.setSpan(parent, span), attempts: 0 };
      }
      if (captureContent) state.span.setAttribute(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, content(call.args));
      calls.set(call, state);
      if (options.startHook) {
        const hook = options.startHook;
        safely(() => hook(state.span, call));
      }
    },

    runInContext(call, run) {
      const state = calls.get(call);
      if (state === undefined) return run();
      if (!spanPerAttempt) return context.with(state.context, run);
      return runAttemptSpan(tracer, call, state, run);
    },

    onEvent(event) {
      const attributes = eventAttributes(event, errorText);
      const state = event.call ? calls.get(event.call) : undefined;
      const span = state?.span ?? trace.getActiveSpan();
      if (span) {
        span.addEvent(event.message, attributes);
        const circuitState = circuitStateOfEvent(event);
        if (state && circuitState) span.setAttribute(ATTR_RETRY_REFLECT_CIRCUIT_STATE, circuitState);
      }
      recordEventMetrics(instruments(), event);
      logger?.emit({
        eventName: `retry_reflect.${event.type}`,
        severityNumber: SEVERITY_NUMBER[event.level],
        severityText: event.level,
        body: event.message,
        attributes,
        context: state?.context ?? context.active(),
      });
    },

    onCallEnd(call, end) {
      const state = calls.get(call);
      calls.delete(call);
      const errorType = finalErrorType(end);
      if (state) {
        const { span } = state;
        span.setAttributes(endAttributes(end));
        if (captureContent && end.status === "success") span.setAttribute(ATTR_GEN_AI_TOOL_CALL_RESULT, content(end.value));
        if (errorType !== undefined) {
          span.setAttribute(ATTR_ERROR_TYPE, errorType);
          span.setStatus(
            errorText === "code-only" ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message: statusMessage(end) },
          );
          if (end.status === "error") span.recordException(toException(end.thrown, errorText));
        }
        if (options.endHook) {
          const hook = options.endHook;
          safely(() => hook(span, call, end));
        }
        if (state.owned) span.end();
      }
      recordCallMetrics(instruments(), call, end, errorType);
    },
  };
}

/** Attributes known at the start of a call, set in both span modes. */
function callAttributes(call: CallInfo): Attributes {
  const attributes: Attributes = { [ATTR_RETRY_REFLECT_TOOL_EFFECT]: call.effect, [ATTR_RETRY_REFLECT_SCOPE]: call.scope };
  if (typeof call.description === "string") attributes[ATTR_GEN_AI_TOOL_DESCRIPTION] = call.description;
  if (typeof call.toolType === "string") attributes[ATTR_GEN_AI_TOOL_TYPE] = call.toolType;
  return attributes;
}

/**
 * One attempt as a child span of the call's: it ends when the attempt settles, with status ERROR
 * when it threw or returned a failure (`error.type`: the error's name, or `returned_error`); no
 * error text (the call span's events carry the cleaned one).
 */
function runAttemptSpan<T>(tracer: Tracer, call: CallInfo, state: CallState, run: () => T): T {
  state.attempts += 1;
  const span = tracer.startSpan(
    `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${call.toolName} attempt ${state.attempts}`,
    { kind: SpanKind.INTERNAL, attributes: { [ATTR_GEN_AI_TOOL_NAME]: call.toolName, [ATTR_RETRY_REFLECT_ATTEMPT_INDEX]: state.attempts } },
    state.context,
  );
  const result = context.with(trace.setSpan(state.context, span), run);
  const fail = (errorType: string) => {
    span.setAttribute(ATTR_ERROR_TYPE, errorType);
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  if (result instanceof Promise) {
    result.then(
      (value: unknown) => (isReturnedFailure(value) ? fail("returned_error") : span.end()),
      (error: unknown) => fail(errorTypeOf(error)),
    );
  } else {
    span.end();
  }
  return result;
}

function endAttributes(end: CallEnd): Attributes {
  const attributes: Attributes = {
    [ATTR_RETRY_REFLECT_ATTEMPT]: end.attempt,
    [ATTR_RETRY_REFLECT_ATTEMPTS]: end.attempts,
    [ATTR_RETRY_REFLECT_OUTCOME]: end.status,
    [ATTR_RETRY_REFLECT_CIRCUIT_STATE]: end.circuitState,
    [ATTR_RETRY_REFLECT_REPLAYED]: end.replayed,
  };
  if (end.fallback === true) attributes[ATTR_RETRY_REFLECT_FALLBACK] = true;
  if (end.reason !== undefined) attributes[ATTR_RETRY_REFLECT_FAILURE_REASON] = end.reason;
  if (end.error !== undefined) attributes[ATTR_RETRY_REFLECT_ERROR_CODE] = end.error.code;
  return attributes;
}
