import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { withRetryReflect } from "@retry-reflect/ai-sdk";
import { generateText, hasToolCall, stepCountIs, type ToolSet, tool } from "ai";
import { textOf } from "../model/conversation.js";
import { ScriptedChatModel } from "../model/scripted-chat-model.js";
import { scenarioTools, wrapperOptionsOf } from "./scenario-tools.js";
import { scriptedLanguageModel } from "./scripted-language-model.js";
import { reportedToolCall } from "./scripted-turn.js";
import { MAX_MODEL_CALLS_PER_TURN, type TurnEngine } from "./turn-engine.js";

type Execute = (args: unknown, options: { toolCallId: string }) => Promise<unknown>;

/**
 * `--adapter ai-sdk`: the AI SDK's `generateText` with `withRetryReflect(tools, plugin)` from
 * `@retry-reflect/ai-sdk` and a scripted mock model. Each of the scenario's tools is an AI SDK
 * `tool()` (its description and zod schema) whose `execute` runs the tool's function with the
 * attempt's signal (`options.abortSignal`); its effect goes in the adapter's `toolEffects`. A
 * `returnDirect` tool ends the run (`stopWhen: hasToolCall`).
 */
export const aiSdkEngine: TurnEngine = async (input) => {
  if (!(input.model instanceof ScriptedChatModel)) throw new Error("--adapter ai-sdk plays the scripted model only");
  const tools = scenarioTools(input);
  const own: ToolSet = {};
  for (const scenarioTool of tools) {
    own[scenarioTool.name] = tool({
      description: scenarioTool.description,
      inputSchema: scenarioTool.schema,
      execute: (args, options) => scenarioTool.run(args, options.abortSignal),
    });
  }
  const wrapped = withRetryReflect(own, input.plugin, wrapperOptionsOf(input, tools));

  const conversation: BaseMessage[] = [...input.messages];
  // Reports what the model receives as each tool's result: its output, or the plugin's message (a tool error).
  const reported: ToolSet = {};
  for (const [name, wrappedTool] of Object.entries(wrapped)) {
    const execute = wrappedTool.execute as Execute;
    reported[name] = {
      ...wrappedTool,
      execute: (args: unknown, options: { toolCallId: string }) =>
        reportedToolCall(input, conversation, { toolName: name, toolCallId: options.toolCallId }, () => execute(args, options)),
    } as ToolSet[string];
  }

  await generateText({
    model: scriptedLanguageModel(input.model.script, input, conversation),
    system: input.systemPrompt,
    // The user's messages of the conversation; the script reads the tool results of this run.
    messages: input.messages
      .filter((message) => HumanMessage.isInstance(message))
      .map((message) => ({ role: "user" as const, content: textOf(message) })),
    tools: reported,
    stopWhen: [stepCountIs(MAX_MODEL_CALLS_PER_TURN), ...tools.filter((t) => t.returnDirect).map((t) => hasToolCall(t.name))],
  });
  return conversation;
};
