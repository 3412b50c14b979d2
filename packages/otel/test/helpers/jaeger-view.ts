import type { AttributeValue, ReceivedSpan } from "./otlp-decode.js";

/** A span as Jaeger stores and shows it (its OTLP translator): attributes as tags, events as logs. */
export interface JaegerSpan {
  readonly serviceName: string;
  readonly operationName: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly tags: Record<string, AttributeValue>;
  /** One log per span event; the event's name is the `event` field. */
  readonly logs: Record<string, AttributeValue>[];
}

// INTERNAL gets no `span.kind` tag (translator README, "SpanKind").
const SPAN_KIND = ["", "", "server", "client", "producer", "consumer"];
const STATUS = ["", "OK", "ERROR"];

/**
 * Mirrors the OTLP-to-Jaeger translation Jaeger applies (opentelemetry-collector-contrib
 * `pkg/translator/jaeger`, README "OpenTelemetry to Jaeger Transformation"): attributes become
 * tags, a non-INTERNAL kind the `span.kind` tag, the scope `otel.scope.name`/`otel.scope.version`,
 * a non-unset status `otel.status_code` (and `otel.status_description`), an ERROR status the
 * `error=true` tag; each event becomes a log whose fields are the event's attributes plus
 * `event=<name>` (an attribute named `event` would win).
 */
export function toJaegerSpan(span: ReceivedSpan): JaegerSpan {
  const tags: Record<string, AttributeValue> = { ...span.attributes };
  if (span.scopeName) tags["otel.scope.name"] = span.scopeName;
  if (span.scopeVersion) tags["otel.scope.version"] = span.scopeVersion;
  if (SPAN_KIND[span.kind]) tags["span.kind"] = SPAN_KIND[span.kind];
  if (STATUS[span.status.code]) tags["otel.status_code"] = STATUS[span.status.code];
  if (span.status.message) tags["otel.status_description"] = span.status.message;
  if (span.status.code === 2) tags.error = true;
  return {
    serviceName: span.serviceName,
    operationName: span.name,
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    tags,
    logs: span.events.map((event) => ({ event: event.name, ...event.attributes })),
  };
}
