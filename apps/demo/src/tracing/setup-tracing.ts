import { context, DiagLogLevel, diag, type TracerProvider } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { type ExportResult, ExportResultCode, setGlobalErrorHandler } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import type { RetryReflectObserver } from "@retry-reflect/core/events";
import { openTelemetryObserver } from "@retry-reflect/otel";

/** The service name the demo's spans carry (search for it in Jaeger). */
export const DEMO_SERVICE_NAME = "retry-reflect-demo";

export interface TracingOptions {
  /** OTLP/HTTP base endpoint; spans go to `<endpoint>/v1/traces`. */
  readonly endpoint: string;
  /** Longest wait for one export (and for the final flush). @default 2000 */
  readonly exportTimeoutMs?: number;
}

/** What an export attempt gave, counted over the whole run. */
export interface ExportStats {
  exportedSpans: number;
  failedExports: number;
  /** The first export error's message (shown as one quiet line, never as a stack). */
  firstError: string | undefined;
}

export interface DemoTracing {
  readonly tracerProvider: TracerProvider;
  /** `openTelemetryObserver({ tracerProvider })`: add it to the plugin's observers. */
  readonly observer: RetryReflectObserver;
  /** Where spans go. */
  readonly tracesUrl: string;
  /** Jaeger's UI for this service, on the collector's host. */
  readonly jaegerUiUrl: string;
  readonly stats: ExportStats;
  /** Flushes pending spans and shuts the provider down, bounded by the export timeout. */
  shutdown(): Promise<void>;
}

/** Counts what the wrapped exporter did, without logging anything. */
class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly stats: ExportStats,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.stats.exportedSpans += spans.length;
      else {
        this.stats.failedExports++;
        this.stats.firstError ??= result.error?.message ?? "export failed";
      }
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

let contextManagerReady = false;

/** Keeps the active span across `await`s (LangChain runs tools several promises deep). */
function ensureContextManager(): void {
  if (contextManagerReady) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  contextManagerReady = true;
}

function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    promise.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}

/**
 * Exports the demo's spans with OTLP/HTTP (JSON). Quiet when no collector listens: export errors
 * are counted, not printed, and every wait is bounded.
 */
export function setupTracing(options: TracingOptions): DemoTracing {
  const exportTimeoutMs = options.exportTimeoutMs ?? 2_000;
  const base = options.endpoint.replace(/\/+$/, "");
  const tracesUrl = base.endsWith("/v1/traces") ? base : `${base}/v1/traces`;
  const stats: ExportStats = { exportedSpans: 0, failedExports: 0, firstError: undefined };

  // No diagnostic chatter and no error dumps when the collector is down.
  diag.setLogger({ error() {}, warn() {}, info() {}, debug() {}, verbose() {} }, DiagLogLevel.NONE);
  setGlobalErrorHandler(() => {});
  ensureContextManager();

  const exporter = new CountingExporter(new OTLPTraceExporter({ url: tracesUrl, timeoutMillis: exportTimeoutMs }), stats);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": DEMO_SERVICE_NAME }),
    spanProcessors: [new BatchSpanProcessor(exporter, { exportTimeoutMillis: exportTimeoutMs, scheduledDelayMillis: 500 })],
  });
  let host = "localhost";
  try {
    host = new URL(tracesUrl).hostname || host;
  } catch {
    // keep localhost
  }
  return {
    tracerProvider: provider,
    observer: openTelemetryObserver({ tracerProvider: provider }),
    tracesUrl,
    jaegerUiUrl: `http://${host}:16686/search?service=${DEMO_SERVICE_NAME}`,
    stats,
    shutdown: () =>
      withTimeout(
        provider.forceFlush().then(() => provider.shutdown()),
        exportTimeoutMs * 2 + 500,
      ),
  };
}
