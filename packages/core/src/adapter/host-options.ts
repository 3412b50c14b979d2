/**
 * A fresh random scope for one wrapper (`prefix/<uuid>`): never a process-local counter, since a
 * scope is also the default namespace of stored write results and goes into derived keys, which a
 * shared store (Redis) compares across processes and restarts. `crypto.randomUUID` where the
 * platform has it (Node.js ≥ 19, browsers, Deno, Bun).
 */
export function randomScope(prefix: string): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  const id =
    typeof crypto?.randomUUID === "function"
      ? crypto.randomUUID()
      : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  return `${prefix}/${id}`;
}
