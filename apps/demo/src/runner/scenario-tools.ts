import type { StructuredToolInterface } from "@langchain/core/tools";
import type { ToolEffect } from "@retry-reflect/core";
import type { z } from "zod";
import type { TurnInput } from "./turn-engine.js";

/**
 * One tool of a scenario, as the engines of the other hosts (`--adapter ai-sdk`, `mcp`,
 * `openai-agents`, `mastra`) make their host's own tool of it. The scenarios write their tools
 * once, as LangChain tools; each engine builds its host's tool from this (name, description, the
 * same zod schema) and runs the tool's function through `run`, with the signal its host gives the
 * wrapped tool: the attempt's own, which the plugin aborts at `attemptTimeoutMs`.
 */
export interface ScenarioTool {
  readonly name: string;
  readonly description: string;
  readonly schema: z.ZodObject<z.ZodRawShape>;
  /** The tool's `metadata.effect`, for the adapter's `toolEffects` (or the MCP server's annotations). */
  readonly effect: ToolEffect | undefined;
  /** LangChain's `returnDirect`: the turn ends once it ran (`exit_loop`). */
  readonly returnDirect: boolean;
  /** Runs the tool's function once; resolves to its output (a string, or the service's JSON). */
  run(args: unknown, signal: AbortSignal | undefined): Promise<unknown>;
}

const EFFECTS: readonly string[] = ["read", "idempotent", "write"];

/** The scenario's tools (`input.tools`), for an engine that builds its host's own. */
export function scenarioTools(input: TurnInput): ScenarioTool[] {
  return input.tools.map((tool: StructuredToolInterface) => {
    const effect = (tool as { metadata?: { effect?: unknown } }).metadata?.effect;
    return {
      name: tool.name,
      description: tool.description,
      schema: tool.schema as z.ZodObject<z.ZodRawShape>,
      effect: typeof effect === "string" && EFFECTS.includes(effect) ? (effect as ToolEffect) : undefined,
      returnDirect: (tool as { returnDirect?: unknown }).returnDirect === true,
      // The attempt's signal becomes the tool's `config.signal`, as in `--engine core`.
      run: (args, signal) => tool.invoke(args as Record<string, unknown>, signal === undefined ? undefined : { signal }),
    };
  });
}

/**
 * The options the AI SDK, Agents SDK and Mastra engines give their adapter's `withRetryReflect`:
 * the run's scope, the turn's write namespace when it has one, and the tools' effects by name.
 */
export function wrapperOptionsOf(
  input: TurnInput,
  tools: readonly ScenarioTool[],
): { scope: string; namespace?: string; toolEffects: Record<string, ToolEffect> } {
  const toolEffects: Record<string, ToolEffect> = {};
  for (const tool of tools) if (tool.effect !== undefined) toolEffects[tool.name] = tool.effect;
  return { scope: input.threadId, toolEffects, ...(input.namespace === undefined ? {} : { namespace: input.namespace }) };
}

/** What the model is shown of a tool's output: a string as it is, anything else as JSON (as the LangChain adapter has it). */
export function outputText(output: unknown): string {
  return typeof output === "string" ? output : JSON.stringify(output);
}
