import { OPTION_NAMES } from "./config/option-table.js";
import type { RetryReflectOptions, ToolPolicy } from "./config/options.js";
import type { RetryReflectObserver } from "./events/events.js";
import type { RetryReflectPlugin } from "./plugin.js";

/** One method per option (`.maxRetries(3)`), typed and documented by its field of `RetryReflectOptions`. */
type OptionMethods = {
  [K in keyof RetryReflectOptions]-?: (value: NonNullable<RetryReflectOptions[K]>) => RetryReflectPluginBuilder;
};

/**
 * Thin, immutable sugar over `RetryReflectOptions`: every method returns a new builder with one
 * field set (`observer` appends one observer, `tool` sets one tool's policy). `build()` validates,
 * like `RetryReflectPlugin.create`. Start one with `RetryReflectPlugin.builder()`.
 */
export interface RetryReflectPluginBuilder extends OptionMethods {
  /** Appends one observer to `observers`. */
  observer(value: RetryReflectObserver): RetryReflectPluginBuilder;
  /** Sets one tool's policy (`tools[name]`), replacing an earlier one for that tool. */
  tool(name: string, policy: ToolPolicy): RetryReflectPluginBuilder;
  /** The options object this builder stands for. */
  toOptions(): RetryReflectOptions;
  /** Validates and builds; throws `InvalidOptionError` naming the option and the value. */
  build(): RetryReflectPlugin;
}

/** The builder `RetryReflectPlugin.builder()` starts: each step makes a new one, over a copy of the options so far. */
export function createBuilder(make: (options: RetryReflectOptions) => RetryReflectPlugin): RetryReflectPluginBuilder {
  const builder = (current: RetryReflectOptions): RetryReflectPluginBuilder => {
    const next = (field: string, value: unknown) => builder({ ...current, [field]: value });
    return {
      ...Object.fromEntries(OPTION_NAMES.map((name) => [name, (value: unknown) => next(name, value)])),
      observer: (value: RetryReflectObserver) => next("observers", [...(current.observers ?? []), value]),
      tool: (name: string, policy: ToolPolicy) => next("tools", { ...(current.tools ?? {}), [name]: policy }),
      toOptions: () => ({ ...current }),
      build: () => make(current),
    } as RetryReflectPluginBuilder;
  };
  return builder({});
}
