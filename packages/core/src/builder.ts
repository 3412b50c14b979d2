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

/** The builder `RetryReflectPlugin.builder()` starts. */
export function createBuilder(make: (options: RetryReflectOptions) => RetryReflectPlugin): RetryReflectPluginBuilder {
  return new Builder({}, make) as unknown as RetryReflectPluginBuilder;
}

class Builder {
  constructor(
    private readonly current: RetryReflectOptions,
    private readonly make: (options: RetryReflectOptions) => RetryReflectPlugin,
  ) {}

  with(field: string, value: unknown): Builder {
    return new Builder({ ...this.current, [field]: value }, this.make);
  }
  observer(value: RetryReflectObserver): Builder {
    return this.with("observers", [...(this.current.observers ?? []), value]);
  }
  tool(name: string, policy: ToolPolicy): Builder {
    return this.with("tools", { ...(this.current.tools ?? {}), [name]: policy });
  }
  toOptions(): RetryReflectOptions {
    return { ...this.current };
  }
  build(): RetryReflectPlugin {
    return this.make(this.current);
  }
}

// The option methods, one per row of the option table.
for (const name of OPTION_NAMES) {
  Object.defineProperty(Builder.prototype, name, {
    value(this: Builder, value: unknown) {
      return this.with(name, value);
    },
  });
}
