import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { withRetryReflect } from "@retry-reflect/ai-sdk";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import { textOf } from "../model/conversation.js";
import { ScriptedChatModel } from "../model/scripted-chat-model.js";
import { observeExecution } from "../tools/tool-hooks.js";
import { fetchWeather, WEATHER_TOOL_DESCRIPTION } from "../tools/weather-tool.js";
import { scriptedLanguageModel } from "./scripted-language-model.js";
import { reportedToolCall } from "./scripted-turn.js";
import { MAX_MODEL_CALLS_PER_TURN, type TurnEngine } from "./turn-engine.js";

/**
 * `--adapter ai-sdk`: the AI SDK's `generateText` with `withRetryReflect(tools, plugin)` from
 * `@retry-reflect/ai-sdk`, a scripted mock model, and an AI SDK `get_weather` tool on the demo's
 * weather service. Plays scenario 1 only (its tool is the one built here).
 */
export const aiSdkEngine: TurnEngine = async (input) => {
  if (!(input.model instanceof ScriptedChatModel)) throw new Error("--adapter ai-sdk plays the scripted model only");
  const { services, hooks = {} } = input;
  if (!services) throw new Error("--adapter ai-sdk needs the scenario's services");
  const getWeather = tool({
    description: WEATHER_TOOL_DESCRIPTION,
    inputSchema: z.object({
      city: z.string().describe("City name, e.g. NYC, London, Paris"),
      units: z.string().describe("Temperature units"),
    }),
    execute: (args, options) =>
      observeExecution(hooks, "get_weather", args, () => fetchWeather(services.weather.url, args, options.abortSignal)),
  });
  const wrapped = withRetryReflect({ get_weather: getWeather }, input.plugin, { scope: input.threadId });
  const execute = wrapped.get_weather.execute;
  if (typeof execute !== "function") throw new Error("the wrapped get_weather has no execute");

  const conversation: BaseMessage[] = [...input.messages];
  // Reports what the model receives as the tool's result: its output, or the plugin's message (a tool error).
  const reported: typeof wrapped = {
    get_weather: {
      ...wrapped.get_weather,
      execute: (args, options) =>
        reportedToolCall(input, conversation, { toolName: "get_weather", toolCallId: options.toolCallId }, async () =>
          execute(args, options),
        ),
    },
  };

  await generateText({
    model: scriptedLanguageModel(input.model.script, input, conversation),
    system: input.systemPrompt,
    // Scenario 1 is one user message; earlier turns of a continued conversation are not carried over.
    messages: input.messages
      .filter((message) => HumanMessage.isInstance(message))
      .map((message) => ({ role: "user" as const, content: textOf(message) })),
    tools: reported,
    stopWhen: stepCountIs(MAX_MODEL_CALLS_PER_TURN),
  });
  return conversation;
};
