import protobuf from "protobufjs";

/**
 * The part of opentelemetry-proto's `trace.proto` / `common.proto` / `resource.proto` that an
 * `ExportTraceServiceRequest` needs (field numbers as published; links are skipped as unknown fields).
 */
const TRACE_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5;
  int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  repeated Event events = 11; uint32 dropped_events_count = 12; uint32 dropped_links_count = 14;
  Status status = 15; fixed32 flags = 16;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`;

const requestType = protobuf.parse(TRACE_PROTO).root.lookupType("otlp.ExportTraceServiceRequest");

export type AttributeValue = string | number | boolean | AttributeValue[] | undefined;

/** A span as received, IDs in hex and attributes as plain values, from either encoding. */
export interface ReceivedSpan {
  readonly serviceName: string;
  readonly scopeName: string;
  readonly scopeVersion: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP enum: 1 INTERNAL, 2 SERVER, 3 CLIENT, ... */
  readonly kind: number;
  readonly attributes: Record<string, AttributeValue>;
  readonly events: { name: string; attributes: Record<string, AttributeValue> }[];
  /** OTLP enum: 0 UNSET, 1 OK, 2 ERROR. */
  readonly status: { code: number; message: string };
}

interface WireKeyValue {
  key: string;
  value?: Record<string, unknown>;
}

function anyValue(value: Record<string, unknown> | undefined): AttributeValue {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return String(value.stringValue);
  if (value.boolValue !== undefined) return Boolean(value.boolValue);
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return Number(value.doubleValue);
  if (value.arrayValue !== undefined) {
    const values = (value.arrayValue as { values?: Record<string, unknown>[] }).values ?? [];
    return values.map((item) => anyValue(item));
  }
  return undefined;
}

function attributes(list: WireKeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const item of list ?? []) out[item.key] = anyValue(item.value);
  return out;
}

function hex(id: unknown): string {
  if (id === undefined || id === null) return "";
  if (typeof id === "string") return id;
  return Buffer.from(id as Uint8Array).toString("hex");
}

// biome-ignore lint/suspicious/noExplicitAny: decoded OTLP JSON or protobuf, read field by field with defaults below
function normalize(request: any): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          serviceName: String(resource["service.name"] ?? ""),
          scopeName: scopeSpans.scope?.name ?? "",
          scopeVersion: scopeSpans.scope?.version ?? "",
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: span.name,
          kind: Number(span.kind ?? 0),
          attributes: attributes(span.attributes),
          // biome-ignore lint/suspicious/noExplicitAny: as above
          events: (span.events ?? []).map((event: any) => ({ name: event.name, attributes: attributes(event.attributes) })),
          status: { code: Number(span.status?.code ?? 0), message: span.status?.message ?? "" },
        });
      }
    }
  }
  return spans;
}

/** Decodes an OTLP/HTTP JSON body (`application/json`). */
export function decodeJsonTraces(body: Buffer): ReceivedSpan[] {
  return normalize(JSON.parse(body.toString("utf8")));
}

/** Decodes an OTLP/HTTP protobuf body (`application/x-protobuf`) with protobufjs. */
export function decodeProtobufTraces(body: Buffer): ReceivedSpan[] {
  const message = requestType.decode(body);
  return normalize(requestType.toObject(message, { longs: String, enums: Number, bytes: Array, defaults: false, oneofs: false }));
}
