import { type TextOf, type Walk, writeNumber } from "./value-walk.js";

type TypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/** Dates, Maps, Sets, typed arrays, DataViews and ArrayBuffers, as one text; `undefined` for anything else. */
export function writeBuiltIn(walk: Walk, item: object, depth: number, textOf: TextOf): string | undefined {
  if (item instanceof Date) return writeDate(walk, item);
  if (item instanceof Map) return writeMap(walk, item, depth, textOf);
  if (item instanceof Set) return writeSet(walk, item, depth, textOf);
  if (ArrayBuffer.isView(item)) {
    if (item instanceof DataView) return writeBytes(walk, "DataView", new Uint8Array(item.buffer, item.byteOffset, item.byteLength));
    return writeTypedArray(walk, item as TypedArray);
  }
  if (item instanceof ArrayBuffer) return writeBytes(walk, "ArrayBuffer", new Uint8Array(item));
  if (typeof SharedArrayBuffer === "function" && item instanceof SharedArrayBuffer) {
    return writeBytes(walk, "SharedArrayBuffer", new Uint8Array(item));
  }
  return undefined;
}

function writeDate(walk: Walk, date: Date): string {
  const time = date.getTime();
  if (walk.tagged) return `!Date(${time})`;
  return Number.isNaN(time) ? "null" : JSON.stringify(date.toISOString());
}

function writeMap(walk: Walk, map: ReadonlyMap<unknown, unknown>, depth: number, textOf: TextOf): string {
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

function compareEntries(left: readonly [string, string], right: readonly [string, string]): number {
  if (left[0] !== right[0]) return left[0] < right[0] ? -1 : 1;
  if (left[1] !== right[1]) return left[1] < right[1] ? -1 : 1;
  return 0;
}

function writeSet(walk: Walk, set: ReadonlySet<unknown>, depth: number, textOf: TextOf): string {
  const elements: string[] = [];
  for (const element of set) elements.push(textOf(walk, element, depth));
  elements.sort();
  return walk.tagged ? `!Set[${elements.join(",")}]` : `[${elements.join(",")}]`;
}

function writeTypedArray(walk: Walk, typed: TypedArray): string {
  if (walk.tagged) return `!${Object.prototype.toString.call(typed).slice(8, -1)}[${typed.join(",")}]`;
  const elements: string[] = [];
  for (const element of typed) elements.push(typeof element === "bigint" ? `"${element}"` : writeNumber(walk, element));
  return `[${elements.join(",")}]`;
}

function writeBytes(walk: Walk, typeName: string, bytes: Uint8Array): string {
  return walk.tagged ? `!${typeName}[${bytes.join(",")}]` : `[${bytes.join(",")}]`;
}
