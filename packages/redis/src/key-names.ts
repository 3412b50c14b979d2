import { createHash } from "node:crypto";

/**
 * What a Redis key name carries of a name that came from outside (a tool name the model picked, an
 * idempotency key it gave): 40 hex digits of its SHA-256, never the name itself. A key name is then
 * of fixed length whatever the name, holds nothing to read or to match, and its braces (the hash
 * tag: the one cluster slot of the key) come from here, never from the name.
 */
export function hashed(name: string): string {
  return createHash("sha256").update(name, "utf8").digest("hex").slice(0, 40);
}
