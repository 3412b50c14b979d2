import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { RetryReflectPlugin } from "@retry-reflect/core";
import type { DemoServices } from "../services/start-services.js";
import type { ToolHooks } from "../tools/tool-hooks.js";

/** Tells the runner what the agent loop did, as it happens. */
export interface TurnReporter {
  /** The model answered (tool calls or text). */
  modelReplied(message: AIMessage): void;
  /** A tool call is about to go through the plugin. */
  toolCallStarted(toolName: string): void;
  /** What the model receives as the tool's result (the plugin's message for a failure). */
  toolCallEnded(message: ToolMessage): void;
}

export interface TurnInput {
  readonly model: BaseChatModel;
  readonly tools: readonly StructuredToolInterface[];
  readonly plugin: RetryReflectPlugin;
  /** The conversation so far, ending with the user's new message. */
  readonly messages: readonly BaseMessage[];
  /** One agent run: the plugin's attempt-tracking scope. */
  readonly threadId: string;
  /**
   * Whose writes these are (the middleware's `namespace`): the id of the request a queue may
   * deliver again, so that its write replays on whichever replica gets it. @default the thread
   */
  readonly namespace?: string;
  readonly systemPrompt: string;
  readonly reporter: TurnReporter;
  /**
   * The scenario's services and tool hooks, for engines that build their own tools instead of
   * using `tools` (the AI SDK and MCP adapters, `--adapter`). Unset in scenario 8.
   */
  readonly services?: DemoServices;
  readonly hooks?: ToolHooks;
}

/** Runs one agent turn (model ↔ tools until the model answers) and returns the conversation after it. */
export type TurnEngine = (input: TurnInput) => Promise<BaseMessage[]>;

/** Upper bound of model calls in one turn, against a script that loops. */
export const MAX_MODEL_CALLS_PER_TURN = 10;
