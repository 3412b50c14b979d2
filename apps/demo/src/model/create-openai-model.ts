import type { BaseChatModel } from "@langchain/core/language_models/chat_models";

/** A `--model openai:<name>` choice, resolved. */
export interface RealModelChoice {
  readonly label: string;
  readonly create: () => BaseChatModel;
}

/**
 * `openai:<name>` → a `ChatOpenAI` (temperature 0). Needs `OPENAI_API_KEY`, or `OPENAI_BASE_URL`
 * for an OpenAI-compatible server (Ollama: `http://localhost:11434/v1`, vLLM), where any key works.
 */
export async function createOpenAiModel(spec: string, env: NodeJS.ProcessEnv = process.env): Promise<RealModelChoice> {
  const name = spec.replace(/^openai:/, "");
  const baseURL = env.OPENAI_BASE_URL?.trim() || undefined;
  const apiKey = env.OPENAI_API_KEY?.trim() || (baseURL ? "not-needed" : undefined);
  if (!apiKey) throw new Error("--model openai:<name> needs OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server)");
  const { ChatOpenAI } = await import("@langchain/openai");
  return {
    label: `${name} via ${baseURL ?? "api.openai.com"} (real model)`,
    create: () => new ChatOpenAI({ model: name, temperature: 0, apiKey, ...(baseURL ? { configuration: { baseURL } } : {}) }),
  };
}
