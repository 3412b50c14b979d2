import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatScript } from "../model/scripted-chat-model.js";
import { errorText } from "../tools/tool-hooks.js";
import { outputText } from "./scenario-tools.js";
import type { TurnInput } from "./turn-engine.js";

/** A tool call of the script's reply, with the id the engine gave it. */
export interface ScriptedCall {
  readonly id: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
}

/** What the script answered: its text (may be empty) and its tool calls (none for a final answer). */
export interface ScriptedTurnReply {
  readonly text: string;
  readonly calls: readonly ScriptedCall[];
}

/**
 * The scripted model of an engine that speaks a host's own protocol (the AI SDK, Mastra, the OpenAI
 * Agents SDK): each call asks the script for its reply to the messages (already turned into the
 * LangChain messages it reads), gives its tool calls the ids `call_1`, `call_2`, ..., adds the reply
 * to the conversation and reports it to the transcript. The engine turns the reply into the host's answer.
 */
export function scriptedReplies(
  script: ChatScript,
  input: TurnInput,
  conversation: BaseMessage[],
): (messages: BaseMessage[]) => ScriptedTurnReply {
  let nextId = 1;
  return (messages) => {
    const reply = script(messages);
    const text = reply.text ?? "";
    const calls = "toolCalls" in reply ? reply.toolCalls.map((call) => ({ id: `call_${nextId++}`, name: call.name, args: call.args })) : [];
    const message = new AIMessage({
      content: text,
      tool_calls: calls.map((call) => ({ id: call.id, name: call.name, args: call.args, type: "tool_call" as const })),
    });
    conversation.push(message);
    input.reporter.modelReplied(message);
    return { text, calls };
  };
}

/**
 * Runs one call of a tool the adapter wrapped, and reports it: its start, then what the model
 * receives as its result (also added to the conversation). That is the output (a string as it is,
 * anything else as JSON), or, for a failure, the plugin's message: what `run` throws (a
 * `RetryReflectToolError`'s message is the plugin's), or the text `failureOf` finds in the output
 * of a host that returns failures as output.
 */
export async function reportedToolCall<T>(
  input: TurnInput,
  conversation: BaseMessage[],
  call: { readonly toolName: string; readonly toolCallId: string },
  run: () => Promise<T>,
  failureOf: (output: T) => string | undefined = () => undefined,
): Promise<T> {
  const ended = (content: string, failed: boolean) => {
    const message = new ToolMessage({
      tool_call_id: call.toolCallId,
      name: call.toolName,
      content,
      ...(failed ? { status: "error" as const } : {}),
    });
    conversation.push(message);
    input.reporter.toolCallEnded(message);
  };
  input.reporter.toolCallStarted(call.toolName);
  let output: T;
  try {
    output = await run();
  } catch (error) {
    ended(errorText(error), true);
    throw error;
  }
  const failure = failureOf(output);
  ended(failure ?? outputText(output), failure !== undefined);
  return output;
}
