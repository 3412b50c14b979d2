import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A span as received in OTLP JSON, flattened. */
export interface ReceivedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly serviceName: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, unknown>> }[];
  readonly statusCode: number | undefined;
}

export interface OtlpReceiver {
  /** Base URL, e.g. `http://127.0.0.1:4318`-like; spans are posted to `/v1/traces`. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Requests on `/v1/traces`. */
  readonly requests: { count: number; contentTypes: string[] };
  close(): Promise<void>;
}

interface OtlpKeyValue {
  key: string;
  value: Record<string, unknown>;
}

function attributeValue(value: Record<string, unknown>): unknown {
  if ("stringValue" in value) return value.stringValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return value.doubleValue;
  if ("boolValue" in value) return value.boolValue;
  if ("arrayValue" in value) return ((value.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(attributeValue);
  return undefined;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) result[key] = attributeValue(value);
  return result;
}

/** A loopback OTLP/HTTP JSON receiver (what Jaeger does on :4318), on 127.0.0.1, port 0. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests = { count: 0, contentTypes: [] as string[] };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.url !== "/v1/traces") {
        response.writeHead(404).end();
        return;
      }
      requests.count++;
      requests.contentTypes.push(String(request.headers["content-type"]));
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans?: {
          resource?: { attributes?: OtlpKeyValue[] };
          scopeSpans?: { spans?: Record<string, unknown>[] }[];
        }[];
      };
      for (const resourceSpan of body.resourceSpans ?? []) {
        const serviceName = attributesOf(resourceSpan.resource?.attributes)["service.name"];
        for (const scopeSpan of resourceSpan.scopeSpans ?? []) {
          for (const span of scopeSpan.spans ?? []) {
            spans.push({
              name: String(span.name),
              traceId: String(span.traceId),
              spanId: String(span.spanId),
              parentSpanId: typeof span.parentSpanId === "string" && span.parentSpanId !== "" ? span.parentSpanId : undefined,
              serviceName: typeof serviceName === "string" ? serviceName : undefined,
              attributes: attributesOf(span.attributes as OtlpKeyValue[] | undefined),
              events: ((span.events as { name: string; attributes?: OtlpKeyValue[] }[] | undefined) ?? []).map((event) => ({
                name: event.name,
                attributes: attributesOf(event.attributes),
              })),
              statusCode: (span.status as { code?: number } | undefined)?.code,
            });
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
