#!/usr/bin/env node
// Sends the seed's scenarios as traces to an OTLP/HTTP endpoint (Jaeger on :4318 by default).
//
//   docker compose -f packages/otel/jaeger/docker-compose.yml up -d
//   npx --yes pnpm@12.4.2 --filter @retry-reflect/otel run build   (and core's build)
//   OTEL_SERVICE_NAME=weather-agent node packages/otel/jaeger/send-example-traces.mjs
//   open http://localhost:16686  -> Service "weather-agent" -> Find Traces
//
// Honours OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) and OTEL_SERVICE_NAME.
// Real time: the times are shortened (a 2 s patience, a 3 s give-up time, a circuit that opens after
// 8 failures for 2 s) so that it takes about ten seconds.
import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, detectResources, envDetector } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { openTelemetryObserver } from "@retry-reflect/otel";

const provider = new NodeTracerProvider({
  resource: defaultResource().merge(detectResources({ detectors: [envDetector] })),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register(); // global tracer provider + AsyncLocalStorage context manager

const plugin = RetryReflectPlugin.builder()
  .patienceMs(2_000)
  .giveUpMs(3_000)
  .circuitBreakerThreshold(8)
  .circuitBreakerResetMs(2_000)
  .toolEffects({ send_email: "write" })
  .observer(openTelemetryObserver())
  .build();
const tracer = trace.getTracer("retry-reflect-example");

async function getWeather(args) {
  const span = tracer.startSpan("GET /v1/current"); // a child of the execute_tool span
  span.end();
  if (args.units !== "celsius" && args.units !== "fahrenheit") {
    throw new ToolError({ code: "INVALID_ARGUMENTS", message: "Invalid units. Supported: celsius, fahrenheit", recoverable: true });
  }
  return { temperature: 21, units: args.units };
}

const alwaysDown = () => {
  throw new ToolError({ code: "TRANSIENT", message: "upstream 503 Service Unavailable", recoverable: true });
};

await tracer.startActiveSpan("invoke_agent weather-agent", async (agent) => {
  // The seed's reflection: kelvin is rejected, the corrected call succeeds on attempt 2.
  await plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "kelvin" }, callId: "call_1", scope: "run-1" }, getWeather);
  await plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "celsius" }, callId: "call_2", scope: "run-1" }, getWeather);
  // A broken tool: retried in place within the patience, then told temporarily unavailable; the
  // next call of the run gives up (failing for the give-up time) and opens the breaker; a call of
  // another run waits for the circuit's probe, which fails: temporary again.
  for (const [callId, scope] of [
    ["call_3", "run-1"],
    ["call_4", "run-1"],
    ["call_5", "run-2"],
  ]) {
    await plugin.execute({ toolName: "api_call", args: {}, callId, scope }, alwaysDown);
  }
  // A write replayed by its idempotency key: the second call does not send twice.
  const email = { to: "ada@example.com", subject: "forecast", idempotency_key: "example-key-1" };
  for (const callId of ["call_6", "call_7"]) {
    await plugin.execute({ toolName: "send_email", args: email, callId, scope: "run-1" }, () => ({ accepted: true }));
  }
  agent.end();
});

await provider.shutdown(); // flushes the batch
console.log(
  `sent; open ${process.env.JAEGER_UI ?? "http://localhost:16686"} and pick service "${process.env.OTEL_SERVICE_NAME ?? "unknown_service:node"}"`,
);
