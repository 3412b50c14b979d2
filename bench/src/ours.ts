import type * as Core from "@retry-reflect/core";
import type * as Adapter from "@retry-reflect/core/adapter";
import type * as Primitives from "@retry-reflect/core/primitives";

/** Three of the core's entries, merged: the main one, its building blocks, and the adapter seam. */
export type CoreModule = typeof Core & typeof Primitives & typeof Adapter;

/**
 * Loads `@retry-reflect/core` if its implementation has landed (the built `dist`), so that the
 * peers still run and "ours" shows as pending while it has not.
 */
export async function loadCore(): Promise<CoreModule | undefined> {
  try {
    const core = (await import("@retry-reflect/core")) as Partial<typeof Core>;
    if (typeof core.RetryReflectPlugin !== "function") return undefined;
    const primitives = await import("@retry-reflect/core/primitives");
    const adapter = await import("@retry-reflect/core/adapter");
    return { ...primitives, ...adapter, ...core } as CoreModule;
  } catch {
    return undefined;
  }
}

export const PENDING = "pending";
