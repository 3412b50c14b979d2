// The peer range is what the tests run against: its lower end is the oldest @openai/agents the
// `openai-agents-oldest` Vitest project runs every test of this package with (the devDependency
// alias `@openai/agents-oldest`), its upper end the minor after the devDependency (the newest
// tested): the SDK is before 1.0, and a minor may change what the adapter relies on.
import { readFileSync } from "node:fs";
import { tool } from "@openai/agents";
import { describe, expect, it } from "vitest";

const own = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const oldest = own.devDependencies["@openai/agents-oldest"]?.replace(/^npm:@openai\/agents@/, "") ?? "";
const newest = own.devDependencies["@openai/agents"] ?? "";

describe("the @openai/agents peer range", () => {
  it("goes from the oldest version tested (the alias) to below the minor after the newest tested", () => {
    expect(oldest).toMatch(/^0\.\d+\.0$/);
    expect(newest).toMatch(/^0\.\d+\.\d+$/);
    const next = Number(newest.split(".")[1]) + 1;
    expect(Number(oldest.split(".")[1])).toBeLessThanOrEqual(next - 1);
    expect(own.peerDependencies["@openai/agents"]).toBe(`>=${oldest} <0.${next}.0`);
  });

  it.runIf(process.env.RETRY_REFLECT_OLDEST === "1")(
    "openai-agents-oldest runs the tests against the oldest (the alias took effect)",
    async () => {
      const aliased = (await import("@openai/agents-oldest")) as { tool: unknown };
      expect(tool).toBe(aliased.tool);
    },
  );
});
