import { UNSERIALIZABLE } from "../texts/model-texts.js";
import { removeControlCharacters } from "./control-characters.js";
import { TRUNCATION_MARK } from "./text-budget.js";

/** How deep `details` are copied: `details` itself is level 1; an object or array below level 8 becomes `"[unserializable]"`. */
export const MAX_DETAILS_DEPTH = 8;

/**
 * The state of one copy: characters of JSON left before it stops, the longest string it keeps,
 * whether it stopped, its longest string, the objects above the value being copied.
 */
export interface Copying {
  left: number;
  readonly stringLimit: number;
  cut: boolean;
  longest: number;
  readonly path: object[];
}

/**
 * A JSON-safe copy of one value (JSON's rules: `undefined`, functions and symbols left out of
 * objects and `null` in arrays, non-finite numbers `null`), or `"[unserializable]"`. Stops taking
 * members (marking `cut`) once the copy passes its window: a huge or wide value costs no more than
 * the window.
 */
export function copyValue(value: unknown, depth: number, copying: Copying, viaToJSON: boolean): unknown {
  switch (typeof value) {
    case "string": {
      // A long string is kept a little past `maxErrorLength` (it is cut to it after redaction).
      // Control characters go before anything is measured: JSON would only escape them (`\u0000`), and the text sinks never see them raw.
      let text = removeControlCharacters(value.length > copying.stringLimit ? value.slice(0, copying.stringLimit) : value);
      if (text.length > copying.left) {
        // Past the window: not a part of it (a part could be the start of a secret the redactor cannot tell).
        copying.cut = true;
        text = TRUNCATION_MARK;
      }
      if (text.length > copying.longest) copying.longest = text.length;
      copying.left -= text.length + 2;
      return text;
    }
    case "number":
      copying.left -= 8;
      return Number.isFinite(value) ? value : null;
    case "boolean":
      copying.left -= 5;
      return value;
    case "bigint":
      return copyValue(value.toString(), depth, copying, false);
    case "object":
      if (value === null) {
        copying.left -= 4;
        return null;
      }
      break;
    default:
      return undefined;
  }
  if (depth > MAX_DETAILS_DEPTH) return unserializable(copying);
  if (!viaToJSON) {
    let toJSON: unknown;
    try {
      toJSON = (value as { toJSON?: unknown }).toJSON;
      // As JSON.stringify: once per value (a `toJSON` returning an object with its own is not called again).
      if (typeof toJSON === "function") return copyValue(toJSON.call(value), depth, copying, true);
    } catch {
      return unserializable(copying);
    }
  }
  // A cycle: an object that holds itself, cut where it closes.
  if (copying.path.includes(value)) return unserializable(copying);
  copying.path.push(value);
  try {
    copying.left -= 2;
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      const length = value.length;
      for (let index = 0; index < length; index++) {
        if (copying.left <= 0) {
          copying.cut = true;
          break;
        }
        const copied = copyValue(readMember(value, index), depth + 1, copying, false);
        out.push(copied === undefined ? null : copied);
        copying.left -= 1;
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(value)) {
      if (copying.left <= name.length) {
        copying.cut = true;
        break;
      }
      const copied = copyValue(readMember(value, name), depth + 1, copying, false);
      if (copied === undefined) continue;
      copying.left -= name.length + 4;
      const member = removeControlCharacters(name);
      // `__proto__` as a plain member (an assignment would set the copy's prototype).
      if (member === "__proto__")
        Object.defineProperty(out, member, { value: copied, enumerable: true, writable: true, configurable: true });
      else out[member] = copied;
    }
    return out;
  } catch {
    // `Object.keys` or `Array.isArray` threw (a proxy, a revoked proxy): the value as a whole.
    return unserializable(copying);
  } finally {
    copying.path.pop();
  }
}

function unserializable(copying: Copying): string {
  copying.left -= UNSERIALIZABLE.length + 2;
  return UNSERIALIZABLE;
}

function readMember(value: object, name: string | number): unknown {
  try {
    return (value as Record<string | number, unknown>)[name];
  } catch {
    return UNSERIALIZABLE;
  }
}
