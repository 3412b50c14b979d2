import { writeBuiltIn } from "./built-in-values.js";
import { Hash64 } from "./hash64.js";
import { type Sink, TextSink, type Walk, writeNumber } from "./value-walk.js";

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

/** Writes the text of `item`, found `depth` containers deep (0: the top level). */
function write(walk: Walk, item: unknown, depth: number): void {
  const sink = walk.sink;
  switch (typeof item) {
    case "string":
      writeQuoted(sink, item);
      return;
    case "number":
      sink.add(writeNumber(walk, item));
      return;
    case "boolean":
      sink.add(item ? "true" : "false");
      return;
    case "bigint":
      sink.add(walk.tagged ? `!bigint(${item})` : `"${item}"`);
      return;
    case "object":
      if (item === null) sink.add("null");
      else writeObject(walk, item, depth + 1);
      return;
    default:
      // undefined, functions and symbols: not data (JSON writes null for them in an array).
      sink.add(walk.tagged ? "!undefined" : "null");
  }
}

/** The text of `item` as a string (for entries that are sorted by their text: Map entries, Set elements). */
function textOf(walk: Walk, item: unknown, depth: number): string {
  const sink = new TextSink();
  write({ tagged: walk.tagged, ancestors: walk.ancestors, omit: walk.omit, sink }, item, depth);
  return sink.text;
}

/**
 * `JSON.stringify` of a string, byte for byte: a string with nothing to escape (no quote, backslash,
 * control character or surrogate) is written between quotes directly, which is several times
 * cheaper for the short strings arguments are made of.
 */
function writeQuoted(sink: Sink, text: string): void {
  if (!sink.addQuoted(text)) sink.add(JSON.stringify(text));
}

function writeObject(walk: Walk, item: object, depth: number): void {
  // An array, not a Map: arguments are shallow, and a push and a pop cost less than a set and a delete.
  const ancestors = walk.ancestors;
  const at = ancestors.lastIndexOf(item);
  if (at !== -1) {
    walk.sink.add(walk.tagged ? `!circular(${ancestors.length - at})` : '"[Circular]"');
    return;
  }
  if (depth > MAX_ARGUMENT_DEPTH) throw new ArgumentDepthError(MAX_ARGUMENT_DEPTH);
  ancestors.push(item);
  writeContainer(walk, item, depth);
  ancestors.pop();
}

function writeContainer(walk: Walk, item: object, depth: number): void {
  const isArray = Array.isArray(item);
  if (!isArray) {
    const prototype: unknown = Object.getPrototypeOf(item);
    // Plain objects (the usual arguments) skip the built-in type checks.
    if (prototype !== Object.prototype && prototype !== null) {
      const builtIn = writeBuiltIn(walk, item, depth, textOf);
      if (builtIn !== undefined) {
        walk.sink.add(builtIn);
        return;
      }
    }
  }
  const toJSON = (item as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    const replaced: unknown = toJSON.call(item);
    // A toJSON that returns its own object is ignored; one that leads back to it meets it as an ancestor.
    if (replaced !== item) {
      write(walk, replaced, depth);
      return;
    }
  }
  if (isArray) writeArray(walk, item, depth);
  else writeMembers(walk, item, depth);
}

function writeArray(walk: Walk, items: readonly unknown[], depth: number): void {
  const sink = walk.sink;
  sink.add("[");
  for (let index = 0; index < items.length; index++) {
    if (index > 0) sink.add(",");
    write(walk, items[index], depth);
  }
  sink.add("]");
}

/** Own enumerable string-keyed members, keys sorted, `undefined`/function/symbol members dropped. */
function writeMembers(walk: Walk, item: object, depth: number): void {
  const members = item as Record<string, unknown>;
  const omit = depth === 1 ? walk.omit : undefined;
  const sink = walk.sink;
  sink.add("{");
  let first = true;
  for (const key of sortedKeys(item)) {
    if (key === omit) continue;
    const member = members[key];
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    if (!first) sink.add(",");
    writeQuoted(sink, key);
    sink.add(":");
    write(walk, member, depth);
    first = false;
  }
  sink.add("}");
}

/** Own enumerable string keys in code-unit order (as `sort()` orders them); an insertion sort for the few keys arguments have. */
function sortedKeys(item: object): string[] {
  const keys = Object.keys(item);
  if (keys.length > 16) return keys.sort();
  for (let index = 1; index < keys.length; index++) {
    const key = keys[index] as string;
    let at = index - 1;
    while (at >= 0 && (keys[at] as string) > key) {
      keys[at + 1] = keys[at] as string;
      at--;
    }
    keys[at + 1] = key;
  }
  return keys;
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
  const sink = new TextSink();
  write({ tagged: false, ancestors: [], omit: undefined, sink }, value, 0);
  return sink.text;
}

/** The arguments without one member (the idempotency key): a copy when it is there, else `args` itself. */
export function withoutField(args: unknown, field: string): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args) || !(field in args)) return args;
  const { [field]: _removed, ...rest } = args as Record<string, unknown>;
  return rest;
}

/**
 * A stable 64-bit hash (16 hex characters) of `args` without the `omit` member (at the top level):
 * the same for the same content (object keys, Map entries and Set elements in any order), different
 * for different content or type: a Map's entries, a Set's elements, `1n` / `1` / `"1"`, a Date's time
 * / its ISO string, a typed array's type and elements, NaN / Infinity / null all count. Objects with
 * a `toJSON` (other than Dates) count as what it returns; `undefined` members are dropped. Not
 * cryptographic: it tells one call's arguments from another's under the same idempotency key.
 *
 * @throws ArgumentDepthError for arguments nested deeper than `MAX_ARGUMENT_DEPTH` levels.
 */
export function argumentsFingerprint(args: unknown, omit?: string): string {
  const sink = new Hash64();
  if (isPlainRecord(args)) writeRecord(sink, args, omit);
  else write({ tagged: true, ancestors: [], omit, sink }, args, 0);
  return sink.digest();
}

/** A plain object without a `toJSON` (the usual arguments): `write` would go straight to its members. */
function isPlainRecord(args: unknown): args is Record<string, unknown> {
  if (typeof args !== "object" || args === null || Array.isArray(args) || Object.getPrototypeOf(args) !== Object.prototype) return false;
  return typeof (args as { toJSON?: unknown }).toJSON !== "function";
}

/**
 * `writeMembers` of a plain top-level object, the same text: strings and finite numbers written in
 * place, every other member through the walk (made on first need, with the object as its ancestor).
 */
function writeRecord(sink: Hash64, members: Record<string, unknown>, omit: string | undefined): void {
  let walk: Walk | undefined;
  sink.add("{");
  let first = true;
  for (const key of sortedKeys(members)) {
    if (key === omit) continue;
    const member = members[key];
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    if (!first) sink.add(",");
    writeQuoted(sink, key);
    sink.add(":");
    if (typeof member === "string") writeQuoted(sink, member);
    else if (typeof member === "number" && Number.isFinite(member)) sink.add(String(member));
    else {
      walk ??= { tagged: true, ancestors: [members], omit, sink };
      write(walk, member, 1);
    }
    first = false;
  }
  sink.add("}");
}
