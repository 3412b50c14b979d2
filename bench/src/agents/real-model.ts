// `--model openai:<name>`: the same tasks, faults and contestants against a real chat model
// (OpenAI, or any OpenAI-compatible server through OPENAI_BASE_URL: Ollama, vLLM). Time is real
// then: the services sleep for real, the user's deadline is a real timer.
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type AgentMiddleware, createMiddleware } from "langchain";
import type { Outcome } from "./episode.js";
import type { Task } from "./world.js";

export interface RealModelChoice {
  readonly label: string;
  readonly create: () => BaseChatModel;
}

/** `openai:<name>` → a `ChatOpenAI` (temperature 0). Needs OPENAI_API_KEY, or OPENAI_BASE_URL (any key works there). */
export async function realModel(spec: string, env: Readonly<Record<string, string | undefined>> = process.env): Promise<RealModelChoice> {
  const match = /^openai:(.+)$/.exec(spec);
  if (match?.[1] === undefined) throw new Error(`--model: expected openai:<model name>, got ${JSON.stringify(spec)}`);
  const name = match[1];
  const baseURL = env.OPENAI_BASE_URL?.trim() || undefined;
  const apiKey = env.OPENAI_API_KEY?.trim() || (baseURL ? "not-needed" : undefined);
  if (apiKey === undefined)
    throw new Error("--model openai:<name> needs OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server)");
  const { ChatOpenAI } = await import("@langchain/openai");
  return {
    label: `${name} via ${baseURL ?? "api.openai.com"}`,
    create: () =>
      new ChatOpenAI({ model: name, temperature: 0, apiKey, maxRetries: 0, ...(baseURL ? { configuration: { baseURL } } : {}) }),
  };
}

/** What the real model is told: the same for every contestant. */
export const SYSTEM_PROMPT =
  "You are an assistant with tools. Use them to do the user's task. Give temperatures in °C as numbers. If you cannot complete the task, say plainly that you could not.";

/** A real model's final text, judged: the true temperature in it is an answer; a plain "could not" is a give-up. */
export function judgeAnswer(text: string, task: Task): Outcome {
  if (mentionsNumber(text, task.temperature)) return "answered";
  if (/could not|couldn't|cannot|can't|unable|not able|unavailable|sorry|failed/i.test(text)) return "gave-up";
  return "wrong-answer";
}

/** Whether `text` has `value` as a number of its own (17 in "17 °C", not in "117"). */
export function mentionsNumber(text: string, value: number): boolean {
  return new RegExp(`(^|[^0-9])${value}([^0-9]|$)`).test(text);
}

/** Counts model calls (the simulated model counts its own). */
export function countModelCalls(counter: { calls: number }): AgentMiddleware {
  return createMiddleware({
    name: "countModelCalls",
    wrapModelCall: async (request, handler) => {
      counter.calls++;
      return handler(request);
    },
  });
}
