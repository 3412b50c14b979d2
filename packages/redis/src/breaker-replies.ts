import type { CircuitAdmission, CircuitStoreSettings, CircuitTransition } from "@retry-reflect/core/stores";
import type { CircuitViews } from "./circuit-views.js";

// Reading the breaker scripts' replies (see breaker-scripts.ts for their shapes).

/** The admission of a closed circuit (no probe). */
export const CLOSED: CircuitAdmission = Object.freeze({ admitted: true, permit: Object.freeze({ probe: 0 }) });

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

/** What an acquire's reply admits; the local view follows it (when the reply is the newest it heard). */
export function admissionOf(local: CircuitViews, key: string, reply: unknown, settings: CircuitStoreSettings): CircuitAdmission {
  const [what, , remaining, failures, openMs, version] = parse(reply);
  const fresh = local.fresh(key, version);
  switch (what) {
    case "closed":
      if (fresh) local.views.delete(key);
      return CLOSED;
    case "probe": {
      // This process holds the probe: its other calls are rejected here for the probe's lease.
      if (fresh) local.see(key, "half-open", settings.resetMs);
      const admission: CircuitAdmission = { admitted: true, permit: { probe: Number((reply as unknown[])[1]) } };
      if (Number((reply as unknown[])[2]) !== 1) return admission;
      const transition: CircuitTransition = { key, from: "open", to: "half-open", failures, resetMs: openMs };
      return { ...admission, transition };
    }
    case "isolated":
      if (fresh) local.see(key, "isolated", 0);
      return { admitted: false, retryAfterMs: Number.POSITIVE_INFINITY, state: "open" };
    case "abandoned":
      // Only an acquire that reached Redis after its own release gets this, and its caller is gone.
      throw new Error("acquire: this request was released after it got no reply in time");
    default:
      if (fresh) local.see(key, what === "half" ? "half-open" : "open", remaining);
      return { admitted: false, retryAfterMs: Math.max(1, remaining), state: what === "half" ? "half-open" : "open" };
  }
}
