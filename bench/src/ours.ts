import type * as Core from "@retry-reflect/core";

export type CoreModule = typeof Core;

/**
 * Loads `@retry-reflect/core` if its implementation has landed (the built `dist`), so that the
 * peers still run and "ours" shows as pending while it has not.
 */
export async function loadCore(): Promise<CoreModule | undefined> {
  try {
    const core = (await import("@retry-reflect/core")) as Partial<CoreModule>;
    return typeof core.RetryReflectPlugin === "function" ? (core as CoreModule) : undefined;
  } catch {
    return undefined;
  }
}

export const PENDING = "pending";
