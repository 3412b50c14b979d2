// The peer range is what the tests run against: its lower end is the oldest @mastra/core the
// `mastra-oldest` Vitest project runs every test of this package with (the devDependency alias
// `@mastra/core-oldest`), and the devDependency, the newest, is inside it.
import { readFileSync } from "node:fs";
import { createTool } from "@mastra/core/tools";
import { describe, expect, it } from "vitest";

const own = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const oldest = own.devDependencies["@mastra/core-oldest"]?.replace(/^npm:@mastra\/core@/, "") ?? "";
const newest = own.devDependencies["@mastra/core"] ?? "";
const parts = (version: string) => version.split(".").map(Number);

describe("the @mastra/core peer range", () => {
  it("goes from the oldest version tested (the alias) to the next major, and holds the newest tested", () => {
    expect(oldest).toMatch(/^1\.\d+\.\d+$/);
    expect(own.peerDependencies["@mastra/core"]).toBe(`^${oldest}`);
    const [major, minor = 0, patch = 0] = parts(newest);
    const [oldMajor, oldMinor = 0, oldPatch = 0] = parts(oldest);
    expect(major).toBe(oldMajor);
    expect(minor * 1e6 + patch).toBeGreaterThanOrEqual(oldMinor * 1e6 + oldPatch);
  });

  it.runIf(process.env.RETRY_REFLECT_OLDEST === "1")(
    "mastra-oldest runs the tests against the oldest (the alias took effect)",
    async () => {
      const aliased = (await import("@mastra/core-oldest/tools")) as { createTool: unknown };
      expect(createTool).toBe(aliased.createTool);
    },
  );
});
