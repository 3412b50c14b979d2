import { UNSERIALIZABLE } from "../texts/model-texts.js";

// How the model is shown a value it sent: bare when it cannot be misread, else with its type.

const MAX_RENDERED_VALUE = 120;

/** The start of a typed rendering; a string starting so is shown quoted, not to be read as one. */
const TYPED_PREFIX = /^(?:string|number|bigint|boolean|array|object|symbol|function)\s/;

function cap(text: string): string {
  return text.length > MAX_RENDERED_VALUE ? `${text.slice(0, MAX_RENDERED_VALUE)}…` : text;
}

/**
 * A value as JSON; a primitive JSON cannot write (a BigInt, `undefined`) as `String` gives it; an
 * object JSON cannot write (a cycle, a BigInt inside, a throwing getter or trap, nesting past the
 * stack) as `"[unserializable]"`, never `[object Object]`. Never throws.
 */
function toJson(value: unknown): string {
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json;
  } catch {
    if (typeof value === "object" && value !== null) return UNSERIALIZABLE;
  }
  try {
    return String(value);
  } catch {
    return UNSERIALIZABLE;
  }
}

/** The JSON type of a value, as the model knows them: `string`, `number`, `boolean`, `null`, `array`, `object`. */
function typeOf(value: unknown): string {
  if (value === null) return "null";
  try {
    if (Array.isArray(value)) return "array";
  } catch {
    // A revoked proxy: an object.
  }
  return typeof value;
}

/** Whether a string can be shown without quotes and still not be taken for something else (a list is comma-separated). */
export function readsBare(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
  if (text === "" || text.trim() !== text || text.includes(",") || /[\u0000-\u001f\u007f]/.test(text)) return false;
  if (TYPED_PREFIX.test(text)) return false;
  try {
    JSON.parse(text);
    return false; // `true`, `12`, `"x"`: the model would read JSON
  } catch {
    return true;
  }
}

/** Renders a value the way the model wrote it: strings bare, everything else as JSON, capped. */
export function renderValue(value: unknown): string {
  return cap(typeof value === "string" ? value : toJson(value));
}

/**
 * Renders a value with its type first, so that the model can tell what it sent:
 * `string "123"`, `number 5`, `boolean true`, `null`, `array [1,2]`, `object {"a":1}`.
 * Strings are JSON-quoted; the value (not the type) is capped like {@link renderValue}.
 */
export function renderTypedValue(value: unknown): string {
  const type = typeOf(value);
  if (type === "null" || type === "undefined") return type;
  const text = type === "number" || type === "bigint" || type === "symbol" || type === "function" ? String(value) : toJson(value);
  return `${type} ${cap(text)}`;
}

/**
 * Renders a value whose type the issue does not question (a bound, a format, an unknown key):
 * a string that cannot be misread is shown bare, any other string with its type (`string "30"`,
 * `string ""`), and other values as JSON, which then cannot be mistaken for a string.
 */
export function renderPlainValue(value: unknown): string {
  if (typeof value === "string") return readsBare(value) ? cap(value) : renderTypedValue(value);
  return renderValue(value);
}

/** Whether the allowed values of an enum or literal can all be listed bare: they are strings that cannot be misread. */
function allowedReadBare(allowed: readonly unknown[]): boolean {
  return allowed.every((option) => typeof option === "string" && readsBare(option));
}

/** Lists allowed values: bare when they all read bare (`celsius, fahrenheit`), else as JSON (`"1", "2"`, `3`). */
export function renderAllowed(allowed: readonly unknown[]): string {
  const bare = allowedReadBare(allowed);
  return allowed.map((option) => (bare ? renderValue(option) : cap(toJson(option)))).join(", ");
}

/**
 * Renders what was sent against an enum or literal: bare when it is a string that cannot be
 * misread and the allowed values are listed bare too (`kelvin`), else with its type
 * (`number 5`, `string "3"`).
 */
export function renderAgainstAllowed(value: unknown, allowed: readonly unknown[]): string {
  return typeof value === "string" && readsBare(value) && allowedReadBare(allowed) ? cap(value) : renderTypedValue(value);
}
