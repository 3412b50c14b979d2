import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { type DataPoint, type HistogramMetricData, MeterProvider, type MetricData, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

/** Installs the AsyncLocalStorage context manager once per test file (Node's real async context). */
export function installContextManager(): void {
  context.disable();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

/** A metric reader that only collects when asked. */
export class CollectingMetricReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** Real SDK providers wired to in-memory exporters. */
export function createTelemetry() {
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const metricReader = new CollectingMetricReader();
  const meterProvider = new MeterProvider({ readers: [metricReader] });
  const logExporter = new InMemoryLogRecordExporter();
  const loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: logExporter })] });

  return {
    spanExporter,
    tracerProvider,
    meterProvider,
    loggerProvider,
    logExporter,
    spans: (): ReadableSpan[] => spanExporter.getFinishedSpans(),
    /** The one finished span with this name (fails if there is not exactly one). */
    span(name: string): ReadableSpan {
      const found = spanExporter.getFinishedSpans().filter((span) => span.name === name);
      if (found.length !== 1) throw new Error(`expected one span named "${name}", found ${found.length}`);
      return found[0] as ReadableSpan;
    },
    /** Every metric collected so far, by name. */
    async metrics(): Promise<Map<string, MetricData>> {
      const { resourceMetrics } = await metricReader.collect();
      const byName = new Map<string, MetricData>();
      for (const scope of resourceMetrics.scopeMetrics) for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
      return byName;
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown(), loggerProvider.shutdown()]);
    },
  };
}

export type Telemetry = ReturnType<typeof createTelemetry>;

/** The data points of a counter, as `{ attributes, value }`. */
export function counterPoints(metric: MetricData | undefined): { attributes: Record<string, unknown>; value: number }[] {
  if (!metric) return [];
  return (metric.dataPoints as DataPoint<number>[]).map((point) => ({ attributes: { ...point.attributes }, value: point.value }));
}

/** The data points of a histogram, as `{ attributes, count, sum }`. */
export function histogramPoints(metric: MetricData | undefined): { attributes: Record<string, unknown>; count: number; sum: number }[] {
  if (!metric) return [];
  return (metric as HistogramMetricData).dataPoints.map((point) => ({
    attributes: { ...point.attributes },
    count: point.value.count,
    sum: point.value.sum ?? Number.NaN,
  }));
}

/** A span's events as `{ name, attributes }`, in order. */
export function spanEvents(span: ReadableSpan): { name: string; attributes: Record<string, unknown> }[] {
  return span.events.map((event) => ({ name: event.name, attributes: { ...event.attributes } }));
}
