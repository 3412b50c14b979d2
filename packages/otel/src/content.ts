const TRUNCATED = "…[truncated]";

/**
 * JSON of a tool's arguments or result for opt-in content capture: the named fields are
 * removed from a top-level object, text longer than `maxLength` is cut and marked, and a value
 * that cannot be serialised (a cycle, a BigInt) becomes a short placeholder instead of throwing.
 */
export function serializeContent(value: unknown, excludeFields: readonly string[], maxLength: number): string {
  let text: string;
  try {
    const stripped = stripFields(value, excludeFields);
    text = typeof stripped === "string" ? stripped : (JSON.stringify(stripped) ?? String(stripped));
  } catch {
    text = "[unserializable]";
  }
  if (text.length <= maxLength) return text;
  return text.slice(0, Math.max(0, maxLength - TRUNCATED.length)) + TRUNCATED;
}

function stripFields(value: unknown, excludeFields: readonly string[]): unknown {
  if (excludeFields.length === 0 || typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (!excludeFields.includes(key)) copy[key] = field;
  }
  return copy;
}
