import { afterEach, beforeEach } from "vitest";

/**
 * The unhandled rejections the process reports while each test of the calling `describe` block
 * runs: emptied before each test, listened for until it ends.
 */
export function collectUnhandledRejections(): readonly unknown[] {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on("unhandledRejection", onUnhandled);
  });
  afterEach(() => {
    process.off("unhandledRejection", onUnhandled);
  });
  return unhandled;
}

/** Lets the event loop run, so that Node reports unhandled rejections (no time is waited for). */
export async function settleEventLoop(): Promise<void> {
  for (let turn = 0; turn < 3; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}
