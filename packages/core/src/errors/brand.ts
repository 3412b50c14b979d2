/**
 * Whether `value` carries `brand` (a `Symbol.for` key set to `true`): how the package's classes
 * recognise their instances across copies of the package (two installs, the CommonJS entry points).
 * Never throws, also for a proxy whose traps do.
 */
export function hasBrand(value: unknown, brand: symbol): boolean {
  if (typeof value !== "object" || value === null) return false;
  try {
    return (value as Record<symbol, unknown>)[brand] === true;
  } catch {
    return false;
  }
}
