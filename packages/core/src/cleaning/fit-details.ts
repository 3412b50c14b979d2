import { MAX_DETAILS_DEPTH } from "./copy-details.js";
import { cutEscaped, cutText, escapedLength, shareBudget } from "./text-budget.js";

/** A copy of a plain JSON value whose strings longer than `max` are cut and marked. */
export function capStrings(value: unknown, max: number, depth: number): unknown {
  return mapStrings(value, (text) => (text.length > max ? cutText(text, max) : text), depth);
}

/** The `{ truncated }` form's own characters: `{"truncated":""}`. */
const TRUNCATED_SHELL = 16;

/**
 * Clean `details` whose JSON is at most `max` characters: as they are when they fit; else with their
 * longest strings cut (the structure kept); else `{ truncated: "<the start of their JSON>… [truncated]" }`;
 * undefined when not even that fits.
 */
export function fitDetails(details: Record<string, unknown>, json: string, max: number): Record<string, unknown> | undefined {
  if (json.length <= max) return details;
  const strings: string[] = [];
  collectStrings(details, strings, 1);
  const needs = strings.map(escapedLength);
  const skeleton = json.length - needs.reduce((sum, need) => sum + need, 0);
  if (skeleton <= max && strings.length > 0) {
    const given = shareBudget(needs, max - skeleton);
    let next = 0;
    const fitted = mapStrings(
      details,
      (text) => {
        const index = next++;
        return (given[index] as number) < (needs[index] as number) ? cutEscaped(text, given[index] as number) : text;
      },
      1,
    ) as Record<string, unknown>;
    return fitted;
  }
  if (max < TRUNCATED_SHELL) return undefined;
  return { truncated: cutEscaped(json, max - TRUNCATED_SHELL) };
}

/** The strings of a plain JSON value, in the order `JSON.stringify` writes them (keys aside). */
function collectStrings(value: unknown, into: string[], depth: number): void {
  if (typeof value === "string") into.push(value);
  else if (typeof value === "object" && value !== null && depth <= MAX_DETAILS_DEPTH + 1) {
    for (const item of Array.isArray(value) ? value : Object.values(value)) collectStrings(item, into, depth + 1);
  }
}

/** A copy of a plain JSON value with each string replaced, in the order `collectStrings` found them. */
function mapStrings(value: unknown, replace: (text: string) => string, depth: number): unknown {
  if (typeof value === "string") return replace(value);
  if (typeof value !== "object" || value === null || depth > MAX_DETAILS_DEPTH + 1) return value;
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, replace, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) {
    const mapped = mapStrings(item, replace, depth + 1);
    if (name === "__proto__") Object.defineProperty(out, name, { value: mapped, enumerable: true, writable: true, configurable: true });
    else out[name] = mapped;
  }
  return out;
}
