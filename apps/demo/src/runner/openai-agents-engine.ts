import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { Agent, type AgentInputItem, type FunctionTool, type ModelRequest, run, setTracingDisabled } from "@openai/agents";
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from "@openai/agents/testing";
import { withRetryReflect } from "@retry-reflect/openai-agents";
import { textOf } from "../model/conversation.js";
import { type ChatScript, ScriptedChatModel } from "../model/scripted-chat-model.js";
import { scenarioTools, wrapperOptionsOf } from "./scenario-tools.js";
import { reportedToolCall, scriptedReplies } from "./scripted-turn.js";
import { MAX_MODEL_CALLS_PER_TURN, type TurnEngine, type TurnInput } from "./turn-engine.js";

/** The text of a message's content or of a function call's output: a string, a text part, or a list of parts. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(contentText).join("");
  if (typeof content === "object" && content !== null && "text" in content && typeof content.text === "string") return content.text;
  return "";
}

/**
 * The SDK's model request (instructions and input items: user messages, the model's own messages
 * and function calls, function call results) as the LangChain messages the scenario scripts read.
 * A function call result carries no error flag (the model is shown text): its status is the one
 * `reportedToolCall` gave the same call id in `conversation`.
 */
function toScriptMessages(request: ModelRequest, conversation: readonly BaseMessage[]): BaseMessage[] {
  const messages: BaseMessage[] = [];
  if (request.systemInstructions) messages.push(new SystemMessage(request.systemInstructions));
  const items: AgentInputItem[] = typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
  for (const item of items) {
    if (item.type === "function_call") {
      // The calls of one reply follow its text (an assistant message): one AIMessage, as LangChain has it.
      const previous = messages.at(-1);
      const call = {
        id: item.callId,
        name: item.name,
        args: JSON.parse(item.arguments || "{}") as Record<string, unknown>,
        type: "tool_call" as const,
      };
      if (previous !== undefined && AIMessage.isInstance(previous)) {
        messages[messages.length - 1] = new AIMessage({ content: previous.content, tool_calls: [...(previous.tool_calls ?? []), call] });
      } else messages.push(new AIMessage({ content: "", tool_calls: [call] }));
    } else if (item.type === "function_call_result") {
      const failed = conversation.some(
        (message) => ToolMessage.isInstance(message) && message.tool_call_id === item.callId && message.status === "error",
      );
      messages.push(
        new ToolMessage({
          tool_call_id: item.callId,
          name: item.name,
          content: contentText(item.output),
          ...(failed ? { status: "error" } : {}),
        }),
      );
    } else if ("role" in item && item.role === "user") messages.push(new HumanMessage(contentText(item.content)));
    else if ("role" in item && item.role === "assistant") messages.push(new AIMessage(contentText(item.content)));
  }
  return messages;
}

/**
 * The SDK's `ScriptedModel` (`@openai/agents/testing`) replaying the scenario's script: one
 * `modelResponder` step per model call (up to `MAX_MODEL_CALLS_PER_TURN`), each turning the request
 * into the messages the script reads and its reply into output items (`assistantMessage` for its
 * text, `functionCall` per tool call). Each reply is reported to the transcript.
 */
function scriptedAgentsModel(script: ChatScript, input: TurnInput, conversation: BaseMessage[]): ScriptedModel {
  const reply = scriptedReplies(script, input, conversation);
  const step = modelResponder(({ request }) => {
    const { text, calls } = reply(toScriptMessages(request, conversation));
    return [
      ...(text || calls.length === 0 ? [assistantMessage(text)] : []),
      ...calls.map((call) => functionCall(call.name, call.args, { callId: call.id })),
    ];
  });
  return new ScriptedModel(Array.from({ length: MAX_MODEL_CALLS_PER_TURN }, () => step));
}

/**
 * `--adapter openai-agents`: the OpenAI Agents SDK's runner (`run(agent, input)`) on a scripted
 * `ScriptedModel`. Each of the scenario's tools is a tool definition (its description and zod
 * schema) whose `execute` runs the tool's function with the attempt's signal (`details.signal`),
 * made into an SDK function tool by `withRetryReflect(definitions, plugin)` from
 * `@retry-reflect/openai-agents`, with the tools' effects in `toolEffects`. The plugin's message for
 * a failure reaches the model as the tool's output text (the adapter's `errorFunction`). A
 * `returnDirect` tool ends the run (`toolUseBehavior: { stopAtToolNames }`).
 */
export const openAiAgentsEngine: TurnEngine = async (input) => {
  if (!(input.model instanceof ScriptedChatModel)) throw new Error("--adapter openai-agents plays the scripted model only");
  // Offline: the SDK's own tracing would export to OpenAI (the demo's spans are the plugin's).
  setTracingDisabled(true);
  const tools = scenarioTools(input);
  // What each call's tool function last returned, by call id: an output that is not it is the plugin's text for a failure.
  const returned = new Map<string, unknown>();
  const wrapped = withRetryReflect(
    tools.map((scenarioTool) => ({
      name: scenarioTool.name,
      description: scenarioTool.description,
      parameters: scenarioTool.schema,
      execute: async (args: unknown, _runContext: unknown, details?: { toolCall?: { callId?: string }; signal?: AbortSignal }) => {
        const output = await scenarioTool.run(args, details?.signal);
        returned.set(details?.toolCall?.callId ?? "", output);
        return output;
      },
    })),
    input.plugin,
    wrapperOptionsOf(input, tools),
  );

  const conversation: BaseMessage[] = [...input.messages];
  // Reports what the model receives as each tool's result. The SDK's `invoke` returns a failure as
  // output (the errorFunction's text, the plugin's message): a string the tool's function did not
  // return for this call. (A replay returns the stored output without running the function: a
  // stored string would read as a failure here; the scenarios' one write returns an object.)
  const reported: FunctionTool[] = wrapped.map((functionTool) => ({
    ...functionTool,
    invoke: (runContext, args, details) => {
      const callId = details?.toolCall?.callId ?? "";
      returned.delete(callId);
      return reportedToolCall(
        input,
        conversation,
        { toolName: functionTool.name, toolCallId: callId },
        () => functionTool.invoke(runContext, args, details),
        (output) => (typeof output === "string" && returned.get(callId) !== output ? output : undefined),
      );
    },
  }));

  const agent = new Agent({
    name: "demo_agent",
    instructions: input.systemPrompt,
    model: scriptedAgentsModel(input.model.script, input, conversation),
    tools: reported,
    toolUseBehavior: { stopAtToolNames: tools.filter((t) => t.returnDirect).map((t) => t.name) },
  });
  // The user's latest message; the script reads the tool results of this run.
  const user = input.messages.at(-1);
  await run(agent, user ? textOf(user) : "", { maxTurns: MAX_MODEL_CALLS_PER_TURN });
  return conversation;
};
