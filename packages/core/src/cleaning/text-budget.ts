// Fitting texts and `details` into `maxErrorLength`: lengths are counted as JSON writes them
// (escaped), and cut texts end with the truncation mark.

/** What ends a cut text. */
export const TRUNCATION_MARK = "… [truncated]";

/** How deep `details` are copied: `details` itself is level 1; an object or array below level 8 becomes `"[unserializable]"`. */
export const MAX_DETAILS_DEPTH = 8;

/** How many characters `JSON.stringify` writes for the UTF-16 unit at `index` (and the one after it, for a surrogate pair). */
function escapedUnit(text: string, index: number): { length: number; units: number } {
  const unit = text.charCodeAt(index);
  if (unit === 0x22 || unit === 0x5c) return { length: 2, units: 1 };
  if (unit < 0x20) return { length: unit === 8 || unit === 9 || unit === 10 || unit === 12 || unit === 13 ? 2 : 6, units: 1 };
  if (unit >= 0xd800 && unit <= 0xdbff) {
    const next = text.charCodeAt(index + 1);
    return next >= 0xdc00 && next <= 0xdfff ? { length: 2, units: 2 } : { length: 6, units: 1 };
  }
  if (unit >= 0xdc00 && unit <= 0xdfff) return { length: 6, units: 1 };
  return { length: 1, units: 1 };
}

/** The length of a string's content as JSON writes it (without its quotes). */
function escapedLength(text: string): number {
  return JSON.stringify(text).length - 2;
}

/**
 * `text` cut so that JSON writes at most `max` characters of it (quotes not counted), ending with the
 * truncation mark when there is room for it. Never splits a surrogate pair.
 */
export function cutEscaped(text: string, max: number): string {
  if (escapedLength(text) <= max) return text;
  const room = max - TRUNCATION_MARK.length;
  const limit = room >= 0 ? room : max;
  let used = 0;
  let index = 0;
  while (index < text.length) {
    const { length, units } = escapedUnit(text, index);
    if (used + length > limit) break;
    used += length;
    index += units;
  }
  return room >= 0 ? text.slice(0, index) + TRUNCATION_MARK : text.slice(0, index);
}

/** `text` cut to at most `max` characters as it is (a bare value), marked when there is room. Never splits a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = max - TRUNCATION_MARK.length;
  let end = Math.max(0, room >= 0 ? room : max);
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return room >= 0 ? text.slice(0, end) + TRUNCATION_MARK : text.slice(0, end);
}

/**
 * Shares `budget` among items that need `needs` each: an item that needs less than an equal share
 * gets what it needs, and what it leaves goes to the others (the longest are cut, the short kept whole).
 */
export function shareBudget(needs: readonly number[], budget: number): number[] {
  const order = needs.map((_, index) => index).sort((a, b) => (needs[a] as number) - (needs[b] as number));
  const given = needs.map(() => 0);
  let left = Math.max(0, budget);
  let count = needs.length;
  for (const index of order) {
    const give = Math.min(needs[index] as number, Math.floor(left / count));
    given[index] = give;
    left -= give;
    count--;
  }
  return given;
}

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
