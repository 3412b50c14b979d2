let counter = 0;

/**
 * A fresh scope for one `withRetryReflect` call. Random, not a counter alone: a scope also goes into
 * keys derived with `idempotency.derive`, which a shared store (Redis) compares across processes.
 */
export function newScope(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  counter += 1;
  const id =
    typeof crypto?.randomUUID === "function" ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `ai-sdk/${id}/${counter}`;
}
