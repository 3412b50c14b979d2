import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { RetryReflectPlugin } from "@retry-reflect/core";

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
  /** The scenario's tools, LangChain tools; the other adapters' engines make their host's own of them (`scenario-tools.ts`). */
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
}

/** Runs one agent turn (model ↔ tools until the model answers) and returns the conversation after it. */
export type TurnEngine = (input: TurnInput) => Promise<BaseMessage[]>;

/** Upper bound of model calls in one turn, against a script that loops. */
export const MAX_MODEL_CALLS_PER_TURN = 10;
