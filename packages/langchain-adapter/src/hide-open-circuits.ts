import { SystemMessage } from "@langchain/core/messages";
import type { RetryReflectPlugin } from "@retry-reflect/core";
import { isolatedCircuitNote, openCircuitNote } from "@retry-reflect/core/adapter";

/** What `hideOpenCircuitTools` reads and changes of a LangChain `ModelRequest`. */
export interface ModelRequestTools {
  readonly tools: readonly unknown[];
  readonly systemMessage: SystemMessage;
  readonly toolChoice?: unknown;
}

function nameOf(tool: unknown): string | undefined {
  if (typeof tool !== "object" || tool === null) return undefined;
  const name = (tool as { name?: unknown }).name;
  return typeof name === "string" ? name : undefined;
}

/** The tool a `toolChoice` forces by name (`{ type: "function", function: { name } }`), if any. */
function forcedToolOf(toolChoice: unknown): string | undefined {
  if (typeof toolChoice !== "object" || toolChoice === null) return undefined;
  const fn = (toolChoice as { function?: { name?: unknown } }).function;
  return typeof fn?.name === "string" ? fn.name : undefined;
}

/**
 * The request without the tools whose circuit is open (or isolated), and with a system note that
 * names each of them; the same request, untouched, when no circuit of its tools is open. A
 * half-open circuit counts as available, so that the probe can run. A tool that `toolChoice`
 * forces by name stays (leaving it out would make the provider reject the request; its call
 * waits for the circuit's probe when it is due within the call's patience, or is told at once that
 * the tool is temporarily unavailable, `CIRCUIT_OPEN`).
 */
export function withoutOpenCircuitTools<R extends ModelRequestTools>(plugin: RetryReflectPlugin, request: R): R {
  const { circuits } = plugin;
  const tools = request.tools;
  // The path of every healthy request: one state read per tool, nothing allocated.
  let first = -1;
  for (let index = 0; index < tools.length; index++) {
    const name = nameOf(tools[index]);
    if (name !== undefined && circuits.state(name) === "open") {
      first = index;
      break;
    }
  }
  if (first === -1) return request;

  const forced = forcedToolOf(request.toolChoice);
  const kept: unknown[] = tools.slice(0, first);
  const notes: string[] = [];
  for (let index = first; index < tools.length; index++) {
    const tool = tools[index];
    const name = nameOf(tool);
    if (name === undefined || name === forced || circuits.state(name) !== "open") {
      kept.push(tool);
    } else if (circuits.isIsolated(name)) {
      notes.push(isolatedCircuitNote(name));
    } else {
      const left = circuits.retryAfterMs(name);
      notes.push(openCircuitNote(name, left === undefined || left === Number.POSITIVE_INFINITY ? undefined : left));
    }
  }
  if (notes.length === 0) return request;
  return { ...request, tools: kept, systemMessage: withNote(request.systemMessage, notes.join("\n")) };
}

/**
 * The system message with the note appended, after a blank line: to its text, or as a text block of
 * its own when its content is blocks (as `createAgent` makes of `systemPrompt`, or with cache control).
 */
function withNote(systemMessage: SystemMessage | undefined, note: string): SystemMessage {
  const base = systemMessage ?? new SystemMessage("");
  const text = base.text === "" ? note : `\n\n${note}`;
  if (typeof base.content === "string") return base.concat(text);
  return base.concat(new SystemMessage({ content: [{ type: "text", text }] }));
}
