/** JSON that never throws: BigInts as strings, circular references as "[Circular]". */
export function safeJson(value: object): string {
  const seen = new WeakSet<object>();
  try {
    const json = JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === "bigint") return item.toString();
      if (typeof item === "object" && item !== null) {
        if (seen.has(item)) return "[Circular]";
        seen.add(item);
      }
      return item;
    });
    return json === undefined ? typeTag(value) : json;
  } catch {
    return typeTag(value);
  }
}

function typeTag(value: object): string {
  try {
    return Object.prototype.toString.call(value);
  } catch {
    // A proxy whose traps throw (even on Symbol.toStringTag).
    return "[object Object]";
  }
}
