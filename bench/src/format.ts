/** Nanoseconds as "123 ns" / "1.23 µs" / "1.23 ms". */
export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return "n/a";
  if (Math.abs(ns) >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (Math.abs(ns) >= 1e3) return `${(ns / 1e3).toFixed(2)} µs`;
  return `${ns.toFixed(0)} ns`;
}

export function formatRatio(ratio: number): string {
  if (!Number.isFinite(ratio)) return "n/a";
  return `${ratio >= 10 ? ratio.toFixed(1) : ratio.toFixed(2)}×`;
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "n/a";
  if (Math.abs(bytes) >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (Math.abs(bytes) >= 10_000) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${Math.round(bytes) || 0} B`; // `|| 0`: never print "-0 B" for a measurement noise below one byte
}

export function formatCount(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
