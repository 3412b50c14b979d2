import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { requestJson } from "./request-json.js";
import { observeExecution, type ToolHooks } from "./tool-hooks.js";

/**
 * `translate_text({text, target_language})`. The translation API answers a structured error when
 * its quota is used up; the tool returns it as is (a returned
 * `{ error_code, message, recoverable, suggested_action }`, instead of a thrown error).
 */
export function createTranslateTool(baseUrl: string, hooks: ToolHooks = {}) {
  return tool(
    (args, config) =>
      observeExecution(hooks, "translate_text", args, async () => {
        const response = await requestJson(new URL("/translate", baseUrl).toString(), {
          method: "POST",
          body: args,
          timeoutMs: 5_000,
          signal: config?.signal,
        });
        return response.body;
      }),
    {
      name: "translate_text",
      description: "Translates a short text into another language. Returns {translation} or a structured error.",
      schema: z.object({
        text: z.string().describe("Text to translate"),
        target_language: z.string().describe("ISO 639-1 code, e.g. fr"),
      }),
      metadata: { effect: "read" },
    },
  );
}
