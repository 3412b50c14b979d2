import type { CircuitTransition } from "@retry-reflect/core";

// Reading the breaker scripts' replies (see breaker-scripts.ts for their shapes).

/** `[what, state, remaining, failures, openMs, version]` of a breaker script's reply. */
export function parse(reply: unknown): [string, string, number, number, number, number] {
  if (!Array.isArray(reply) || typeof reply[0] !== "string") {
    throw new TypeError(`unexpected reply from Redis: ${JSON.stringify(reply)?.slice(0, 80)}`);
  }
  return [reply[0], String(reply[1]), Number(reply[2]) || 0, Number(reply[3]) || 0, Number(reply[4]) || 0, Number(reply[5]) || 0];
}

/** The version of an isolate/reset reply (`[state, version]`). */
export function versionOf(reply: unknown): number {
  return Array.isArray(reply) ? Number(reply[1]) || 0 : 0;
}

/** The transition a record reply reports (also when its view update is stale: the change happened). */
export function transitionOf(what: string, key: string, failures: number, openMs: number, resetMs: number): CircuitTransition | undefined {
  if (what === "opened") return { key, from: "closed", to: "open", failures, resetMs: openMs };
  if (what === "reopened") return { key, from: "half-open", to: "open", failures, resetMs: openMs };
  if (what === "closed") return { key, from: "half-open", to: "closed", failures, resetMs };
  return undefined;
}
