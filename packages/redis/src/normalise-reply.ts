import { isObject } from "./is-object.js";

// Replies read the same way from both clients, whatever their protocol (RESP2, RESP3) and options.

/** Same JS values from both clients: numbers, strings, null, arrays (Buffers become UTF-8 strings). */
export function normaliseReply(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "number" || typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(normaliseReply);
  if (typeof value === "bigint") return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("utf8");
  return value;
}

/** The value after `name` in a CONFIG GET reply: a flat array (RESP2), an object or a Map (RESP3). */
export function configValue(reply: unknown, name: string): string | undefined {
  let value: unknown;
  if (Array.isArray(reply)) {
    const index = reply.findIndex((item, i) => i % 2 === 0 && normaliseReply(item) === name);
    value = index >= 0 ? reply[index + 1] : undefined;
  } else if (reply instanceof Map) {
    value = reply.get(name);
  } else if (isObject(reply)) {
    value = reply[name];
  }
  const normalised = normaliseReply(value);
  return typeof normalised === "string" ? normalised : undefined;
}
