import type { BaseMessage } from "@langchain/core/messages";
import { Agent } from "@mastra/core/agent";
import { createTool, type ToolExecutionContext } from "@mastra/core/tools";
import { withRetryReflect } from "@retry-reflect/mastra";
import { hasToolCall, stepCountIs } from "ai";
import { textOf } from "../model/conversation.js";
import { ScriptedChatModel } from "../model/scripted-chat-model.js";
import { scenarioTools, wrapperOptionsOf } from "./scenario-tools.js";
import { scriptedLanguageModel } from "./scripted-language-model.js";
import { reportedToolCall } from "./scripted-turn.js";
import { MAX_MODEL_CALLS_PER_TURN, type TurnEngine } from "./turn-engine.js";

type MastraExecute = (input: unknown, context: ToolExecutionContext | undefined) => Promise<unknown>;

/**
 * `--adapter mastra`: a Mastra `Agent` (`agent.generate`) on the same scripted AI SDK mock model as
 * `--adapter ai-sdk`. Each of the scenario's tools is a `createTool` tool (its description and zod
 * schema) whose `execute` runs the tool's function with the attempt's signal
 * (`context.abortSignal`), wrapped by `withRetryReflect(tools, plugin)` from `@retry-reflect/mastra`
 * with the tools' effects in `toolEffects`. A `returnDirect` tool ends the run (`stopWhen`).
 */
export const mastraEngine: TurnEngine = async (input) => {
  if (!(input.model instanceof ScriptedChatModel)) throw new Error("--adapter mastra plays the scripted model only");
  const tools = scenarioTools(input);
  const own: Record<string, object> = {};
  for (const scenarioTool of tools) {
    own[scenarioTool.name] = createTool({
      id: scenarioTool.name,
      description: scenarioTool.description,
      inputSchema: scenarioTool.schema,
      execute: (args, context) => scenarioTool.run(args, context?.abortSignal),
    });
  }
  const wrapped = withRetryReflect(own, input.plugin, wrapperOptionsOf(input, tools));

  const conversation: BaseMessage[] = [...input.messages];
  // Reports what the model receives as each tool's result: its output, or the plugin's message (the
  // thrown error, whose message Mastra shows the model as the tool's error). A copy of each Mastra
  // tool (its prototype and Mastra's mark kept), as the adapter makes its own.
  const reported: Record<string, object> = {};
  for (const [name, wrappedTool] of Object.entries(wrapped)) {
    const execute = (wrappedTool as { execute: MastraExecute }).execute;
    const descriptors = Object.getOwnPropertyDescriptors(wrappedTool);
    descriptors.execute = {
      value: (args: unknown, context: ToolExecutionContext | undefined) =>
        reportedToolCall(input, conversation, { toolName: name, toolCallId: context?.agent?.toolCallId ?? "" }, () =>
          execute.call(wrappedTool, args, context),
        ),
      writable: true,
      enumerable: true,
      configurable: true,
    };
    reported[name] = Object.create(Object.getPrototypeOf(wrappedTool) as object | null, descriptors) as object;
  }

  const agent = new Agent({
    id: "demo_agent",
    name: "demo_agent",
    instructions: input.systemPrompt,
    model: scriptedLanguageModel(input.model.script, input, conversation),
    tools: reported as never,
  });
  // The user's latest message; the script reads the tool results of this run.
  const user = input.messages.at(-1);
  await agent.generate(user ? textOf(user) : "", {
    maxSteps: MAX_MODEL_CALLS_PER_TURN,
    stopWhen: [stepCountIs(MAX_MODEL_CALLS_PER_TURN), ...tools.filter((t) => t.returnDirect).map((t) => hasToolCall(t.name))],
  });
  return conversation;
};
