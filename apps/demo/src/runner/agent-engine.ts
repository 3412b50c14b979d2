import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { retryReflectMiddleware } from "@retry-reflect/langchain";
import { createAgent, createMiddleware } from "langchain";
import { MAX_MODEL_CALLS_PER_TURN, type TurnEngine, type TurnReporter } from "./turn-engine.js";

/**
 * Reports model replies and final tool results to the transcript. Listed first, so it is the
 * outermost layer: it sees what the model receives after the retry-reflect middleware decided.
 */
function transcriptMiddleware(reporter: TurnReporter) {
  return createMiddleware({
    name: "DemoTranscript",
    wrapModelCall: async (request, handler) => {
      const reply = await handler(request);
      if (AIMessage.isInstance(reply)) reporter.modelReplied(reply);
      return reply;
    },
    wrapToolCall: async (request, handler) => {
      reporter.toolCallStarted(request.toolCall.name);
      const result = await handler(request);
      if (ToolMessage.isInstance(result)) reporter.toolCallEnded(result);
      return result;
    },
  });
}

/**
 * The real thing: LangChain's `createAgent` with `retryReflectMiddleware(plugin)`. Each turn is one
 * `invoke` on the thread `threadId` (the adapter scopes attempts to one agent run).
 */
export const agentEngine: TurnEngine = async (input) => {
  const agent = createAgent({
    model: input.model,
    tools: [...input.tools],
    systemPrompt: input.systemPrompt,
    // toolContext "all": every tool can read its attempt's context (`getToolContext()`), so that
    // generate_report gets the attempt's own signal, which `attemptTimeoutMs` aborts.
    middleware: [
      transcriptMiddleware(input.reporter),
      retryReflectMiddleware(input.plugin, {
        toolContext: "all",
        ...(input.namespace === undefined ? {} : { namespace: () => input.namespace as string }),
      }),
    ],
  });
  const result = await agent.invoke(
    { messages: [...input.messages] },
    { configurable: { thread_id: input.threadId }, recursionLimit: MAX_MODEL_CALLS_PER_TURN * 3 },
  );
  return result.messages as BaseMessage[];
};
