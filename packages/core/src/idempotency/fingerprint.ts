/** How deeply arguments may nest (objects, arrays, Maps, Sets, toJSON replacements) before they are refused. */
export const MAX_ARGUMENT_DEPTH = 1000;

/**
 * Thrown by `canonicalJson` and `argumentsFingerprint` for arguments nested deeper than
 * `MAX_ARGUMENT_DEPTH` levels, instead of a stack overflow (`RangeError`) deep inside the walk.
 */
export class ArgumentDepthError extends TypeError {
  /** The deepest nesting allowed. */
  readonly maxDepth: number;

  constructor(maxDepth: number = MAX_ARGUMENT_DEPTH) {
    super(`Arguments are nested deeper than ${maxDepth} levels.`);
    this.name = "ArgumentDepthError";
    this.maxDepth = maxDepth;
  }
}

/**
 * One walk over a value. `tagged: false` writes JSON for display; `tagged: true` writes the text that
 * is hashed: JSON data exactly as for display, every other kind of value as a `!`-tagged token
 * (`!bigint(1)`, `!Date(0)`, `!Map[...]`, `!NaN`, ...). A `!` never starts a JSON value, and every
 * token ends unambiguously, so two different values never give the same tagged text.
 */
interface Walk {
  readonly tagged: boolean;
  /** The containers being written, outermost first: meeting one again is a circular reference. */
  readonly ancestors: object[];
  /** A top-level member left out (the idempotency key), or undefined. */
  readonly omit: string | undefined;
}

/** The text of `item`, found `depth` containers deep (0: the top level). */
function textOf(walk: Walk, item: unknown, depth: number): string {
  switch (typeof item) {
    case "string":
      return JSON.stringify(item);
    case "number":
      return numberText(walk, item);
    case "boolean":
      return item ? "true" : "false";
    case "bigint":
      return walk.tagged ? `!bigint(${item})` : `"${item}"`;
    case "object": {
      if (item === null) return "null";
      const { ancestors } = walk;
      const at = ancestors.lastIndexOf(item);
      if (at !== -1) return walk.tagged ? `!circular(${ancestors.length - at})` : '"[Circular]"';
      if (depth >= MAX_ARGUMENT_DEPTH) throw new ArgumentDepthError(MAX_ARGUMENT_DEPTH);
      ancestors.push(item);
      const text = containerText(walk, item, depth + 1);
      ancestors.pop();
      return text;
    }
    default:
      // undefined, functions and symbols: not data (JSON writes null for them in an array).
      return walk.tagged ? "!undefined" : "null";
  }
}

function numberText(walk: Walk, value: number): string {
  if (Number.isFinite(value)) return String(value);
  if (!walk.tagged) return "null";
  if (Number.isNaN(value)) return "!NaN";
  return value > 0 ? "!Infinity" : "!-Infinity";
}

function containerText(walk: Walk, item: object, depth: number): string {
  const isArray = Array.isArray(item);
  if (!isArray) {
    const builtIn = builtInText(walk, item, depth);
    if (builtIn !== undefined) return builtIn;
  }
  const toJSON = (item as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    const replaced: unknown = toJSON.call(item);
    // A toJSON that returns its own object is ignored; one that leads back to it meets it as an ancestor.
    if (replaced !== item) return textOf(walk, replaced, depth);
  }
  const parts: string[] = [];
  if (isArray) {
    for (let index = 0; index < item.length; index++) parts.push(textOf(walk, item[index], depth));
    return `[${parts.join(",")}]`;
  }
  // Own enumerable string keys, sorted; `undefined`, function and symbol members dropped.
  const omit = depth === 1 ? walk.omit : undefined;
  for (const key of Object.keys(item).sort()) {
    if (key === omit) continue;
    const member = (item as Record<string, unknown>)[key];
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    parts.push(`${JSON.stringify(key)}:${textOf(walk, member, depth)}`);
  }
  return `{${parts.join(",")}}`;
}

/** Dates, Maps, Sets, typed arrays, DataViews and ArrayBuffers, by value; `undefined` for anything else. */
function builtInText(walk: Walk, item: object, depth: number): string | undefined {
  if (item instanceof Date) {
    const time = item.getTime();
    if (walk.tagged) return `!Date(${time})`;
    return Number.isNaN(time) ? "null" : JSON.stringify(item.toISOString());
  }
  if (item instanceof Map) return mapText(walk, item, depth);
  if (item instanceof Set) return setText(walk, item, depth);
  if (ArrayBuffer.isView(item)) {
    if (item instanceof DataView) return binaryText(walk, "DataView", new Uint8Array(item.buffer, item.byteOffset, item.byteLength));
    return binaryText(walk, Object.prototype.toString.call(item).slice(8, -1), item as unknown as TypedArray);
  }
  if (item instanceof ArrayBuffer) return binaryText(walk, "ArrayBuffer", new Uint8Array(item));
  if (typeof SharedArrayBuffer === "function" && item instanceof SharedArrayBuffer) {
    return binaryText(walk, "SharedArrayBuffer", new Uint8Array(item));
  }
  return undefined;
}

/** Entries sorted by their text: the same Map in any insertion order. */
function mapText(walk: Walk, map: ReadonlyMap<unknown, unknown>, depth: number): string {
  const entries: Array<readonly [key: string, value: string]> = [];
  let allKeysAreStrings = true;
  for (const [key, value] of map) {
    if (typeof key !== "string") allKeysAreStrings = false;
    entries.push([textOf(walk, key, depth), textOf(walk, value, depth)]);
  }
  entries.sort(compareEntries);
  if (walk.tagged) return `!Map[${entries.map(([key, value]) => `${key}:${value}`).join(",")}]`;
  if (allKeysAreStrings) return `{${entries.map(([key, value]) => `${key}:${value}`).join(",")}}`;
  return `[${entries.map(([key, value]) => `[${key},${value}]`).join(",")}]`;
}

function setText(walk: Walk, set: ReadonlySet<unknown>, depth: number): string {
  const elements: string[] = [];
  for (const element of set) elements.push(textOf(walk, element, depth));
  elements.sort();
  return walk.tagged ? `!Set[${elements.join(",")}]` : `[${elements.join(",")}]`;
}

type TypedArray = Iterable<number | bigint> & { join(separator: string): string };

/** A typed array's elements, or the bytes of a DataView or a buffer; tagged with its type. */
function binaryText(walk: Walk, typeName: string, typed: TypedArray): string {
  if (walk.tagged) return `!${typeName}[${typed.join(",")}]`;
  const elements: string[] = [];
  for (const element of typed) elements.push(typeof element === "bigint" ? `"${element}"` : numberText(walk, element));
  return `[${elements.join(",")}]`;
}

function compareEntries(left: readonly [string, string], right: readonly [string, string]): number {
  if (left[0] !== right[0]) return left[0] < right[0] ? -1 : 1;
  if (left[1] !== right[1]) return left[1] < right[1] ? -1 : 1;
  return 0;
}

/**
 * Canonical JSON, for display: object keys sorted, `undefined` members dropped, circular references
 * as "[Circular]". Other values as JSON can hold them: BigInts as strings, Dates as ISO strings
 * (invalid ones as null), non-finite numbers as null, Maps as objects (string keys) or as arrays of
 * `[key, value]` pairs sorted by key, Sets as sorted arrays, typed arrays, DataViews and ArrayBuffers
 * as arrays of numbers; other objects through their `toJSON` if they have one. Two argument objects
 * that mean the same give the same text, but different values may too (`1n` and `"1"`): the
 * fingerprint (`argumentsFingerprint`) tells them apart.
 *
 * @throws ArgumentDepthError for values nested deeper than `MAX_ARGUMENT_DEPTH` levels.
 */
export function canonicalJson(value: unknown): string {
  return textOf({ tagged: false, ancestors: [], omit: undefined }, value, 0);
}

/** The arguments without one member (the idempotency key): a copy when it is there, else `args` itself. */
export function withoutField(args: unknown, field: string): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args) || !(field in args)) return args;
  const { [field]: _removed, ...rest } = args as Record<string, unknown>;
  return rest;
}

/** The JSON text of `value`; undefined when it has none (`undefined`, a cycle, a BigInt, a getter that throws). */
export function jsonTextOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * A stable 64-bit hash (16 hex characters) of `args` without the `omit` member (at the top level):
 * the same for the same content (object keys, Map entries and Set elements in any order), different
 * for different content or type: a Map's entries, a Set's elements, `1n` / `1` / `"1"`, a Date's time
 * / its ISO string, a typed array's type and elements, NaN / Infinity / null all count. Objects with
 * a `toJSON` (other than Dates) count as what it returns; `undefined` members are dropped. Not
 * cryptographic: it tells one call's arguments from another's under the same idempotency key. Stores
 * shared by processes of different releases compare it: its value for given arguments never changes.
 *
 * @throws ArgumentDepthError for arguments nested deeper than `MAX_ARGUMENT_DEPTH` levels.
 */
export function argumentsFingerprint(args: unknown, omit?: string): string {
  const text = textOf({ tagged: true, ancestors: [], omit }, args, 0);
  // cyrb53's two 32-bit states over the tagged text, mixed into 64 bits.
  let state1 = 0xdeadbeef | 0;
  let state2 = 0x41c6ce57 | 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    state1 = Math.imul(state1 ^ code, 2654435761);
    state2 = Math.imul(state2 ^ code, 1597334677);
  }
  const mixed1 = Math.imul(state1 ^ (state1 >>> 16), 2246822507) ^ Math.imul(state2 ^ (state2 >>> 13), 3266489909);
  const mixed2 = Math.imul(state2 ^ (state2 >>> 16), 2246822507) ^ Math.imul(mixed1 ^ (mixed1 >>> 13), 3266489909);
  return hex(mixed2) + hex(mixed1);
}

/** A 32-bit word as 8 hex digits. */
export function hex(word: number): string {
  return (word >>> 0).toString(16).padStart(8, "0");
}
