// OpenTelemetry: every tool call is an `execute_tool` span, its retries and reflections span events,
// exported with OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318, Jaeger's).
import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { openTelemetryObserver } from "@retry-reflect/otel";

const endpoint = `${process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "http://localhost:4318"}/v1/traces`;
const serviceName = process.env.OTEL_SERVICE_NAME ?? "retry-reflect-examples";

// The OTLP/HTTP exporter reads OTEL_EXPORTER_OTLP_ENDPOINT itself; a short timeout when no collector runs.
const exporter = new OTLPTraceExporter({ timeoutMillis: 2_000 });
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": serviceName }),
  spanProcessors: [new BatchSpanProcessor(exporter)],
});
provider.register(); // the global tracer provider, and the context manager that parents the spans

const plugin = RetryReflectPlugin.create({ maxRetries: 3, observers: [openTelemetryObserver()] });

let searchRuns = 0;
async function searchDocs({ query }) {
  searchRuns += 1; // a flaky backend: 503 once, then it works (retried in place, inside one span)
  if (searchRuns === 1) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
  return `Doc: "${query}" is covered in chapter 3.`;
}
async function getWeather({ units }) {
  if (units !== "celsius" && units !== "fahrenheit") throw new Error("Invalid units. Supported: celsius, fahrenheit");
  return { temperature: 22, condition: "sunny" };
}

// One agent run: a parent span, and the tool calls the model made in it.
await trace.getTracer("retry-reflect-examples").startActiveSpan("invoke_agent weather-agent", async (run) => {
  const call = (callId, toolName, args, tool) => plugin.execute({ toolName, callId, scope: "run-1", args }, tool);
  const search = await call("call_1", "search_docs", { query: "retries" }, searchDocs);
  console.log(`search_docs: ${search.status} after ${searchRuns} attempts`);
  const bad = await call("call_2", "get_weather", { city: "NYC", units: "kelvin" }, getWeather);
  console.log(`get_weather (kelvin): ${bad.status}: ${bad.prompt}`);
  const good = await call("call_3", "get_weather", { city: "NYC", units: "celsius" }, getWeather);
  console.log(`get_weather (celsius): ${good.status} on attempt ${good.attempt}`);
  run.end();
});

// A short script must flush its spans before it exits: shutdown() sends them, and rejects when none arrived.
try {
  await provider.shutdown();
  console.log(`exported the spans to ${endpoint}; in Jaeger (http://localhost:16686) pick the service "${serviceName}"`);
} catch (error) {
  console.log(`no collector answered at ${endpoint} (${error.message}): the spans were dropped`);
}
