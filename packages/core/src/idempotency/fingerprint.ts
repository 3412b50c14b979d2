/**
 * Canonical JSON: object keys sorted, `undefined` members dropped, BigInts as strings, circular
 * references as "[Circular]". Two argument objects that mean the same give the same text.
 */
export function canonicalJson(value: unknown): string {
  const stack = new Set<object>();
  const write = (item: unknown): string => {
    if (item === null || typeof item === "number" || typeof item === "boolean") return JSON.stringify(item) ?? "null";
    if (typeof item === "string") return JSON.stringify(item);
    if (typeof item === "bigint") return JSON.stringify(item.toString());
    if (typeof item !== "object") return "null";
    if (stack.has(item)) return '"[Circular]"';
    const toJSON = (item as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      const replaced: unknown = toJSON.call(item);
      // A toJSON that returns its own object (or one that leads back to it) would recurse forever.
      if (replaced !== item) {
        stack.add(item);
        const out = write(replaced);
        stack.delete(item);
        return out;
      }
    }
    stack.add(item);
    let out: string;
    if (Array.isArray(item)) {
      out = `[${item.map((element) => (element === undefined || typeof element === "function" ? "null" : write(element))).join(",")}]`;
    } else {
      const parts: string[] = [];
      for (const key of Object.keys(item).sort()) {
        const member = (item as Record<string, unknown>)[key];
        if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
        parts.push(`${JSON.stringify(key)}:${write(member)}`);
      }
      out = `{${parts.join(",")}}`;
    }
    stack.delete(item);
    return out;
  };
  return write(value);
}

/** cyrb53: a fast 53-bit string hash (not cryptographic). */
function cyrb53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The arguments without one member (the idempotency key): a copy when it is there, else `args` itself. */
export function withoutField(args: unknown, field: string): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args) || !(field in args)) return args;
  const { [field]: _removed, ...rest } = args as Record<string, unknown>;
  return rest;
}

/** A stable 106-bit hash (hex) of the canonical JSON of `args` without the `omit` field. */
export function argumentsFingerprint(args: unknown, omit?: string): string {
  const text = canonicalJson(omit === undefined ? args : withoutField(args, omit));
  return cyrb53(text, 1).toString(16).padStart(14, "0") + cyrb53(text, 2).toString(16).padStart(14, "0");
}
