import { safeJson } from "./safe-json.js";

/**
 * Turns anything a tool threw or returned into one line-safe text: strings as they are, errors by
 * their message, other values as JSON (circular references and BigInts handled), never throwing.
 */
export function errorMessageOf(error: unknown): string {
  if (typeof error === "string") return error;
  if (error === undefined) return "the tool failed without an error message (undefined)";
  if (error === null) return "the tool failed without an error message (null)";
  if (typeof error === "object") {
    const message = readMessage(error);
    if (message !== undefined) return message;
    return safeJson(error);
  }
  if (typeof error === "function") return `the tool failed with a function (${error.name || "anonymous"})`;
  return String(error);
}

function readMessage(error: object): string | undefined {
  try {
    const { message, name } = error as { message?: unknown; name?: unknown };
    if (typeof message === "string" && message.length > 0) return message;
    if (error instanceof Error) return typeof name === "string" && name ? name : "Error";
    const content = (error as { content?: unknown }).content;
    if (Array.isArray(content)) {
      const texts = content
        .map((part: unknown) => (typeof part === "object" && part !== null ? (part as { text?: unknown }).text : undefined))
        .filter((text): text is string => typeof text === "string");
      if (texts.length > 0) return texts.join("\n");
    }
    if (typeof content === "string" && content.length > 0) return content;
  } catch {
    // A getter that throws: fall through to JSON.
  }
  return undefined;
}
