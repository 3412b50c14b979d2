import { CircuitBreaker } from "@retry-reflect/core";
const names = Array.from({ length: 100_000 }, (_, i) => `tool_${i.toString().padStart(7, "0")}`);
function heap() { gc!(); gc!(); return process.memoryUsage().heapUsed; }
let held: unknown;
for (const [label, threshold] of [["open", 1], ["counted", 5], ["open", 1], ["counted", 5], ["open", 1]] as const) {
  held = undefined;
  const b0 = heap();
  const breaker = new CircuitBreaker({ threshold, maxKeys: 200_000 });
  for (const n of names) { const d = breaker.acquire(n); if (d.admitted) breaker.onFailure(n, d.permit); }
  held = breaker;
  const b1 = heap();
  console.log(label, ((b1 - b0) / 1e5).toFixed(1), breaker.size);
}
