// The few shapes of the AI SDK the adapter relies on, written out so that the same declarations fit
// AI SDK 6 and 7 (whose `ToolSet` and `ToolExecutionOptions` types differ): the adapter imports
// nothing from `ai`, at run time or in its types.

/** The execution options the AI SDK passes a tool's `execute` (6: `experimental_context`; 7: `context`). */
export interface ToolExecutionOptionsLike {
  /** The model's tool-call id. */
  readonly toolCallId: string;
  /** The messages sent to the model for the step that made the call. */
  readonly messages: readonly unknown[];
  /** The run's signal (`abortSignal` of `generateText` / `streamText`, merged with its timeouts). */
  readonly abortSignal?: AbortSignal;
  /** AI SDK 6: the run's `experimental_context`. */
  readonly experimental_context?: unknown;
  /** AI SDK 7: the tool's context. */
  readonly context?: unknown;
}

/** What the adapter needs of an AI SDK tool: every tool of a `ToolSet` (6 or 7) fits. */
export interface ToolLike {
  readonly execute?: ((input: never, options: never) => unknown) | undefined;
}

/** An AI SDK `ToolSet` (6 or 7): tools by name. */
export type ToolSetLike = Readonly<Record<string, ToolLike>>;
