export { drive, recordEvents } from "@retry-reflect/core/testing";

import { MockLanguageModelV3 } from "ai/test";

/** One answer of the mock model (`doGenerate`), in the provider spec's own shape. */
export type ModelTurn = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;
/** What the model was sent in one call. */
export type ModelCall = MockLanguageModelV3["doGenerateCalls"][number];
/** One part of the mock model's stream (`doStream`). */
export type StreamPart = Awaited<ReturnType<MockLanguageModelV3["doStream"]>>["stream"] extends ReadableStream<infer P> ? P : never;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** The model's turn that calls tools, as a provider sends it (the input as JSON text). */
export function callTools(...calls: Array<{ name: string; input: Record<string, unknown>; id: string }>): ModelTurn {
  return {
    content: calls.map((call) => ({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.input) })),
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

/** The model's final answer. */
export function reply(text: string): ModelTurn {
  return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
}

/**
 * A mock model that plays `turns` in order and, like a real provider's `fetch`, rejects with the
 * abort reason when the run's `abortSignal` has aborted.
 */
export function scriptedModel(...turns: ModelTurn[]): MockLanguageModelV3 {
  let index = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      options.abortSignal?.throwIfAborted();
      const turn = turns[index++];
      if (turn === undefined) throw new Error(`the scripted model has no turn ${index}`);
      return turn;
    },
  });
}

/** The stream of a model turn, for `doStream`. */
export function streamOf(turn: ModelTurn): StreamPart[] {
  const parts: StreamPart[] = [{ type: "stream-start", warnings: [] }];
  for (const part of turn.content) {
    if (part.type === "tool-call") parts.push(part);
    if (part.type === "text") {
      parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: part.text }, { type: "text-end", id: "t" });
    }
  }
  parts.push({ type: "finish", finishReason: turn.finishReason, usage: turn.usage });
  return parts;
}

/** What the model was shown as tool results in one call (the last tool message of its prompt). */
export function toolOutputsSeen(call: ModelCall | undefined): Array<{ toolName: string; toolCallId: string; output: unknown }> {
  const messages = call?.prompt ?? [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== "tool") continue;
    return message.content.flatMap((part) =>
      part.type === "tool-result" ? [{ toolName: part.toolName, toolCallId: part.toolCallId, output: part.output }] : [],
    );
  }
  return [];
}

/** The names of the tools offered to the model in one call. */
export function toolsOffered(call: ModelCall | undefined): string[] {
  return (call?.tools ?? []).map((tool) => tool.name);
}

/** The text of a tool output the model was shown as an error (`error-text`); throws for any other output. */
export function errorText(seen: { output: unknown } | undefined): string {
  const output = seen?.output as { type?: unknown; value?: unknown } | undefined;
  if (output?.type !== "error-text" || typeof output.value !== "string")
    throw new Error(`not an error-text output: ${JSON.stringify(output)}`);
  return output.value;
}
