/**
 * The tool a wrapped tool was made from (kept under `key`), else the tool itself: wrapping wrapped
 * tools again wraps the originals, never stacks.
 */
export function originalTool(tool: Record<string, unknown>, key: symbol): Record<string, unknown> {
  return (tool as { [key]?: Record<string, unknown> })[key] ?? tool;
}

/**
 * A copy of a host's tool object (its prototype and every own property kept, so that the host
 * still knows it for what it is) whose `execute` is the given one, and which keeps the original
 * under `key` (see {@link originalTool}). The original is left as it was.
 */
export function withExecute(tool: object, execute: (...args: never[]) => unknown, key: symbol): object {
  const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(tool);
  descriptors.execute = { value: execute, writable: true, enumerable: true, configurable: true };
  descriptors[key] = { value: tool };
  return Object.create(Object.getPrototypeOf(tool) as object | null, descriptors) as object;
}
