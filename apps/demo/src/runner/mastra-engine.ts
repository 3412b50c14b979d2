import type { BaseMessage } from "@langchain/core/messages";
import { Agent } from "@mastra/core/agent";
import { createTool, type ToolExecutionContext } from "@mastra/core/tools";
import { withRetryReflect } from "@retry-reflect/mastra";
import { z } from "zod";
import { textOf } from "../model/conversation.js";
import { ScriptedChatModel } from "../model/scripted-chat-model.js";
import { observeExecution } from "../tools/tool-hooks.js";
import { fetchWeather, WEATHER_TOOL_DESCRIPTION } from "../tools/weather-tool.js";
import { scriptedLanguageModel } from "./scripted-language-model.js";
import { reportedToolCall } from "./scripted-turn.js";
import { MAX_MODEL_CALLS_PER_TURN, type TurnEngine } from "./turn-engine.js";

type MastraExecute = (input: unknown, context: ToolExecutionContext | undefined) => Promise<unknown>;

/**
 * `--adapter mastra`: a Mastra `Agent` (`agent.generate`) on the same scripted AI SDK mock model as
 * `--adapter ai-sdk`, with a `createTool` `get_weather` on the demo's weather service wrapped by
 * `withRetryReflect(tools, plugin)` from `@retry-reflect/mastra`. Plays scenario 1 only.
 */
export const mastraEngine: TurnEngine = async (input) => {
  if (!(input.model instanceof ScriptedChatModel)) throw new Error("--adapter mastra plays the scripted model only");
  const { services, hooks = {} } = input;
  if (!services) throw new Error("--adapter mastra needs the scenario's services");
  const getWeather = createTool({
    id: "get_weather",
    description: WEATHER_TOOL_DESCRIPTION,
    inputSchema: z.object({
      city: z.string().describe("City name, e.g. NYC, London, Paris"),
      units: z.string().describe("Temperature units"),
    }),
    // `context.abortSignal` is the attempt's signal here (the plugin's, tied to the run's).
    execute: (args, context) =>
      observeExecution(hooks, "get_weather", args, () => fetchWeather(services.weather.url, args, context?.abortSignal)),
  });
  const wrapped = withRetryReflect({ get_weather: getWeather }, input.plugin, { scope: input.threadId });

  const conversation: BaseMessage[] = [...input.messages];
  // Reports what the model receives as the tool's result: its output, or the plugin's message (the
  // thrown error, whose message Mastra shows the model as the tool's error). A copy of the Mastra
  // tool (its prototype and Mastra's mark kept), as the adapter makes its own.
  const execute = wrapped.get_weather.execute as unknown as MastraExecute;
  const descriptors = Object.getOwnPropertyDescriptors(wrapped.get_weather);
  descriptors.execute = {
    value: (args: unknown, context: ToolExecutionContext | undefined) =>
      reportedToolCall(input, conversation, { toolName: "get_weather", toolCallId: context?.agent?.toolCallId ?? "" }, () =>
        execute(args, context),
      ),
    writable: true,
    enumerable: true,
    configurable: true,
  };
  const reported = Object.create(Object.getPrototypeOf(wrapped.get_weather) as object | null, descriptors) as typeof getWeather;

  const agent = new Agent({
    id: "demo_agent",
    name: "demo_agent",
    instructions: input.systemPrompt,
    model: scriptedLanguageModel(input.model.script, input, conversation),
    tools: { get_weather: reported },
  });
  // Scenario 1 is one user message; earlier turns of a continued conversation are not carried over.
  const user = input.messages.at(-1);
  await agent.generate(user ? textOf(user) : "", { maxSteps: MAX_MODEL_CALLS_PER_TURN });
  return conversation;
};
