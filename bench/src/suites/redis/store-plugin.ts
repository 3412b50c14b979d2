// The plugin the round-trip and latency parts call through, and its two tools.
import type { CoreModule } from "../../ours.js";
import { type Plugin, RESET_MS, type Stores, THRESHOLD } from "./parameters.js";

/** A no-op tool that succeeds. */
export const ok = async (_args?: unknown) => ({ ok: true });

/** A tool that always throws `new Error("upstream exploded")`. */
export const exploding = async (_args?: unknown): Promise<never> => {
  throw new Error("upstream exploded");
};

/** Both Redis stores, a write tool (`send_payment`), threshold 5. */
export function storePlugin(core: CoreModule, stores: Stores): Plugin {
  return core.RetryReflectPlugin.create({
    toolEffects: { send_payment: "write" },
    circuitBreakerThreshold: THRESHOLD,
    circuitBreakerResetMs: RESET_MS,
    idempotency: { store: stores.idempotency },
    circuitBreakerStore: stores.circuitBreaker,
  });
}
