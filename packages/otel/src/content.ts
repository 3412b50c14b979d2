import { defaultRedactor } from "@retry-reflect/core/primitives";

const TRUNCATED = "…[truncated]";

/**
 * JSON of a tool's arguments or result for opt-in content capture: the named fields are removed
 * from a top-level object, the text goes through the core's `defaultRedactor` (secret-named
 * members such as `api_key`, `token` or `password`, known token shapes, control characters), text
 * longer than `maxLength` is cut and marked, and a value that cannot be serialised (a cycle, a
 * BigInt) becomes a short placeholder instead of throwing. Redacted before it is cut, so that a cut
 * never shows the start of a secret the redactor would have seen whole.
 */
export function serializeContent(value: unknown, excludeFields: readonly string[], maxLength: number): string {
  let text: string;
  try {
    const stripped = stripFields(value, excludeFields);
    text = typeof stripped === "string" ? stripped : (JSON.stringify(stripped) ?? String(stripped));
  } catch {
    text = "[unserializable]";
  }
  // Bounded work: the redactor reads a prefix a few times longer than what is kept.
  const window = maxLength * 4 + 256;
  const redacted = defaultRedactor(text.length > window ? text.slice(0, window) : text);
  if (redacted.length <= maxLength && text.length <= window) return redacted;
  return redacted.slice(0, Math.max(0, maxLength - TRUNCATED.length)) + TRUNCATED;
}

function stripFields(value: unknown, excludeFields: readonly string[]): unknown {
  if (excludeFields.length === 0 || typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (!excludeFields.includes(key)) copy[key] = field;
  }
  return copy;
}
