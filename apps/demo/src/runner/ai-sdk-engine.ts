import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { RetryReflectToolError, withRetryReflect } from "@retry-reflect/ai-sdk";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { textOf } from "../model/conversation.js";
import { type ChatScript, ScriptedChatModel } from "../model/scripted-chat-model.js";
import { errorText, observeExecution } from "../tools/tool-hooks.js";
import { fetchWeather, WEATHER_TOOL_DESCRIPTION } from "../tools/weather-tool.js";
import { MAX_MODEL_CALLS_PER_TURN, type TurnEngine, type TurnInput } from "./turn-engine.js";

type ModelTurn = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;
type ModelPrompt = Parameters<MockLanguageModelV3["doGenerate"]>[0]["prompt"];

const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

/** What an AI SDK tool output says, as text (the error text of a failure, JSON for a value). */
function outputText(output: { type: string; value?: unknown }): { text: string; error: boolean } {
  const error = output.type.startsWith("error");
  const text = typeof output.value === "string" ? output.value : JSON.stringify(output.value ?? null);
  return { text, error };
}

/** The AI SDK prompt as LangChain messages, which the scenario scripts read. */
function toScriptMessages(prompt: ModelPrompt): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (const message of prompt) {
    if (message.role === "system") messages.push(new SystemMessage(message.content));
    else if (message.role === "user") {
      messages.push(new HumanMessage(message.content.map((part) => (part.type === "text" ? part.text : "")).join("")));
    } else if (message.role === "assistant") {
      const text = message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
      const toolCalls = message.content.flatMap((part) =>
        part.type === "tool-call"
          ? [{ id: part.toolCallId, name: part.toolName, args: (part.input ?? {}) as Record<string, unknown>, type: "tool_call" as const }]
          : [],
      );
      messages.push(new AIMessage({ content: text, tool_calls: toolCalls }));
    } else if (message.role === "tool") {
      for (const part of message.content) {
        if (part.type !== "tool-result") continue;
        const { text, error } = outputText(part.output as { type: string; value?: unknown });
        messages.push(
          new ToolMessage({ tool_call_id: part.toolCallId, name: part.toolName, content: text, ...(error ? { status: "error" } : {}) }),
        );
      }
    }
  }
  return messages;
}

/**
 * A mock AI SDK model (`MockLanguageModelV3` from `ai/test`) that replays the scenario's script: it
 * turns the prompt it is sent into the messages the script reads, and the script's reply into a
 * provider answer (tool calls, or text). Each reply is reported to the transcript.
 */
function scriptedLanguageModel(script: ChatScript, input: TurnInput, conversation: BaseMessage[]): MockLanguageModelV3 {
  let nextId = 1;
  return new MockLanguageModelV3({
    doGenerate: async (options): Promise<ModelTurn> => {
      options.abortSignal?.throwIfAborted();
      const reply = script(toScriptMessages(options.prompt));
      const text = reply.text ?? "";
      const calls = "toolCalls" in reply ? reply.toolCalls.map((call) => ({ ...call, id: `call_${nextId++}` })) : [];
      const message = new AIMessage({
        content: text,
        tool_calls: calls.map((call) => ({ id: call.id, name: call.name, args: call.args, type: "tool_call" as const })),
      });
      conversation.push(message);
      input.reporter.modelReplied(message);
      if (calls.length === 0)
        return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      return {
        content: [
          ...(text ? [{ type: "text" as const, text }] : []),
          ...calls.map((call) => ({
            type: "tool-call" as const,
            toolCallId: call.id,
            toolName: call.name,
            input: JSON.stringify(call.args),
          })),
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });
}

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
      execute: async (args, options) => {
        input.reporter.toolCallStarted("get_weather");
        const toolCallId = options.toolCallId;
        try {
          const output = await execute(args, options);
          const message = new ToolMessage({ tool_call_id: toolCallId, name: "get_weather", content: JSON.stringify(output) });
          conversation.push(message);
          input.reporter.toolCallEnded(message);
          return output;
        } catch (error) {
          const content = RetryReflectToolError.isInstance(error) ? error.message : errorText(error);
          const message = new ToolMessage({ tool_call_id: toolCallId, name: "get_weather", content, status: "error" });
          conversation.push(message);
          input.reporter.toolCallEnded(message);
          throw error;
        }
      },
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
