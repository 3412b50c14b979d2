// A loopback OpenAI-compatible chat server for the `--model` path: `ChatOpenAI` talks real HTTP to
// it. Its "model" is a few lines: ask for the weather, retry after an error, then answer (or send
// the email first, for a write task, with an idempotency key once asked for one).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

interface ChatMessage {
  readonly role: string;
  readonly content?: string | null;
  readonly name?: string;
}

export interface OpenAiStub {
  readonly baseURL: string;
  /** The messages of every request, in order. */
  readonly requests: ChatMessage[][];
  close(): Promise<void>;
}

function reply(messages: readonly ChatMessage[]): { content: string | null; call?: { name: string; args: Record<string, unknown> } } {
  const prompt = messages.find((message) => message.role === "user")?.content ?? "";
  const city = /temperature in ([A-Z][a-z]+)/.exec(prompt)?.[1]?.toLowerCase() ?? "paris";
  const tools = messages.filter((message) => message.role === "tool").map((message) => String(message.content ?? ""));
  const weather = tools.map((content) => /"temperature_c":(\d+)/.exec(content)?.[1]).find((value) => value !== undefined);
  if (weather === undefined) return { content: null, call: { name: "get_weather", args: { city } } };
  const recipient = /^Email (\S+) /.exec(prompt)?.[1];
  if (recipient !== undefined && !tools.some((content) => content.includes('"status":"sent"'))) {
    // Asked for an idempotency key (retry-reflect's default for a write), it passes one.
    const key = tools.some((content) => /idempotency key/i.test(content)) ? { idempotency_key: "email-1" } : {};
    const args = { to: recipient, subject: "The temperature", body: `It is ${weather} °C.`, ...key };
    return { content: null, call: { name: "send_email", args } };
  }
  return { content: `It is ${weather} °C.` };
}

export async function startOpenAiStub(): Promise<OpenAiStub> {
  const requests: ChatMessage[][] = [];
  let calls = 0;
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += String(chunk);
    });
    request.on("end", () => {
      const { messages } = JSON.parse(body) as { messages: ChatMessage[] };
      requests.push(messages);
      const { content, call } = reply(messages);
      const message = {
        role: "assistant",
        content,
        ...(call === undefined
          ? {}
          : {
              tool_calls: [
                { id: `call_${++calls}`, type: "function", function: { name: call.name, arguments: JSON.stringify(call.args) } },
              ],
            }),
      };
      response.setHeader("content-type", "application/json");
      response.end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: "chat.completion",
          created: 0,
          model: "stub",
          choices: [{ index: 0, message, finish_reason: call === undefined ? "stop" : "tool_calls" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
