/** A few words on what `value` is, for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "string") return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)})`;
  if (typeof value !== "object" && typeof value !== "function") return `${typeof value} ${String(value)}`;
  if (typeof (value as { then?: unknown }).then === "function") {
    return "a Promise (pass the client itself, after `await client.connect()`, not the promise)";
  }
  if (typeof value === "function") return `a function${value.name ? ` (${value.name})` : ""}`;
  const record = value as Record<string, unknown>;
  if (record.isCluster === true) return "an object marked `isCluster` without an ioredis Cluster's methods";
  if (typeof record.sendCommand === "function" && typeof record.isReady !== "boolean") {
    return "a node-redis client pool or similar, which is not supported (pass a `createClient(...)` client)";
  }
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  const keys = Object.keys(value);
  const shown = keys.length === 0 ? "no own keys" : `keys ${keys.slice(0, 6).join(", ")}${keys.length > 6 ? ", ..." : ""}`;
  return `${typeof name === "string" && name !== "Object" ? `an instance of ${name}` : "an object"} with ${shown}`;
}
