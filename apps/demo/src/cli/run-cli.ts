import { createOpenAiModel, type RealModelChoice } from "../model/create-openai-model.js";
import { colorsWanted, createStyle } from "../output/style.js";
import { agentEngine } from "../runner/agent-engine.js";
import { aiSdkEngine } from "../runner/ai-sdk-engine.js";
import { coreEngine } from "../runner/core-engine.js";
import { mastraEngine } from "../runner/mastra-engine.js";
import { mcpEngine } from "../runner/mcp-engine.js";
import { openAiAgentsEngine } from "../runner/openai-agents-engine.js";
import { runDemo } from "../runner/run-demo.js";
import { createVirtualClock } from "../runner/virtual-clock.js";
import { type DemoTracing, setupTracing } from "../tracing/setup-tracing.js";
import { CliError, type DemoAdapter, HELP_TEXT, parseArgs, SCENARIO_COUNT } from "./parse-args.js";

export interface CliIo {
  /** One line of normal output. */
  readonly out: (line: string) => void;
  /** One line of error output. */
  readonly err: (line: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal (colours). */
  readonly isTTY: boolean;
}

/** The agent loop, its label and the tools' label of each `--adapter` but langchain. */
const ADAPTER_RUNS = {
  "ai-sdk": {
    engine: aiSdkEngine,
    engineLabel: "AI SDK generateText + withRetryReflect(tools, plugin) (--adapter ai-sdk), a scripted MockLanguageModelV3",
    toolsLabel: "Tools: the scenarios' tools as AI SDK tool()s, calling real HTTP services on 127.0.0.1, with injected faults.",
  },
  mcp: {
    engine: mcpEngine,
    engineLabel: "a scripted loop on withRetryReflect(client, plugin).callTool (--adapter mcp)",
    toolsLabel:
      "Tools: the scenarios' tools served by an in-process McpServer (in-memory transport), calling real HTTP services on 127.0.0.1, with injected faults.",
  },
  "openai-agents": {
    engine: openAiAgentsEngine,
    engineLabel: "OpenAI Agents SDK run(agent) + withRetryReflect(definitions, plugin) (--adapter openai-agents), a scripted ScriptedModel",
    toolsLabel:
      "Tools: the scenarios' tools as Agents SDK tool definitions, calling real HTTP services on 127.0.0.1, with injected faults.",
  },
  mastra: {
    engine: mastraEngine,
    engineLabel: "Mastra Agent.generate + withRetryReflect(tools, plugin) (--adapter mastra), a scripted MockLanguageModelV3",
    toolsLabel: "Tools: the scenarios' tools as Mastra createTool()s, calling real HTTP services on 127.0.0.1, with injected faults.",
  },
} as const satisfies Record<Exclude<DemoAdapter, "langchain">, { engine: unknown; engineLabel: string; toolsLabel: string }>;

/** `1 span`, `3 spans`. */
function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** The demo's command line: parses, runs, prints, and returns the exit code (0, 1, or 2 for usage errors). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let options: ReturnType<typeof parseArgs>;
  try {
    options = parseArgs(argv, io.env);
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`demo: ${error.message}`);
      return 2;
    }
    throw error;
  }
  if (options.help) {
    for (const line of HELP_TEXT.split("\n")) io.out(line);
    return 0;
  }
  const style = createStyle(options.color ?? colorsWanted({ isTTY: io.isTTY }, io.env));

  let model: RealModelChoice | undefined;
  if (options.model) {
    try {
      model = await createOpenAiModel(options.model, io.env);
    } catch (error) {
      io.err(`demo: ${error instanceof Error ? error.message : String(error)}`);
      return 2;
    }
  }

  let tracing: DemoTracing | undefined;
  if (options.otlpEndpoint) {
    tracing = setupTracing({ endpoint: options.otlpEndpoint });
    io.out(style.dim(`Tracing: OTLP/HTTP to ${tracing.tracesUrl} (service "retry-reflect-demo")`));
  }

  const engine = options.engine ?? "agent";
  const clock = options.fast ? createVirtualClock() : undefined;
  const adapterRun = options.adapter === "langchain" ? undefined : ADAPTER_RUNS[options.adapter];
  try {
    const result = await runDemo({
      sink: io.out,
      style,
      // Another adapter plays the offline scenarios (1-8); scenario 9's replicas are LangChain agents.
      scenarioIds:
        adapterRun && options.scenarios.length === 0 ? Array.from({ length: SCENARIO_COUNT }, (_, index) => index + 1) : options.scenarios,
      clock,
      clockLabel: options.fast ? "virtual time (--fast: backoffs and the reset are simulated, not waited for)" : "real time",
      engine: adapterRun?.engine ?? (engine === "agent" ? agentEngine : coreEngine),
      engineLabel:
        adapterRun?.engineLabel ??
        (engine === "agent" ? "LangChain createAgent + retryReflectMiddleware(plugin)" : "core plugin.execute loop (--engine core)"),
      toolsLabel: adapterRun?.toolsLabel,
      model,
      observers: tracing ? [tracing.observer] : [],
      tracerProvider: tracing?.tracerProvider,
      redisUrl: adapterRun ? undefined : options.redisUrl,
    });
    return result.ok ? 0 : 1;
  } finally {
    if (tracing) {
      await tracing.shutdown();
      const { exportedSpans, failedExports } = tracing.stats;
      if (failedExports === 0 && exportedSpans > 0) {
        io.out("");
        io.out(`Traces: ${plural(exportedSpans, "span")} exported. Open Jaeger: ${style.bold(tracing.jaegerUiUrl)}`);
      } else if (exportedSpans === 0) {
        io.out("");
        io.out(
          style.dim(`Traces: no collector answered at ${tracing.tracesUrl}; spans were dropped. Start Jaeger (see apps/demo/README.md).`),
        );
      } else {
        io.out("");
        io.out(
          `Traces: ${plural(exportedSpans, "span")} exported, ${plural(failedExports, "export")} failed. Open Jaeger: ${tracing.jaegerUiUrl}`,
        );
      }
    }
  }
}
