import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The host versions each adapter's tests run against: pinned exactly in its `devDependencies`,
// installed as pinned, and named in its README, so that "tested with" never goes stale when a pin
// moves. (A pin such as `npm:ai@7.0.173` is an alias: its installed folder is the alias's name.)

const packages = fileURLToPath(new URL("../../", import.meta.url));

const HOSTS: Readonly<Record<string, readonly string[]>> = {
  "ai-sdk": ["ai", "ai-v7", "@ai-sdk/mcp", "@modelcontextprotocol/sdk"],
  "langchain-adapter": ["langchain", "@langchain/core", "@langchain/langgraph"],
  mastra: ["@mastra/core", "ai"],
  mcp: ["@modelcontextprotocol/sdk", "@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem"],
  "openai-agents": ["@openai/agents"],
};

const json = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

/** The exact version a pin names (`1.2.3`, `npm:name@1.2.3`), or undefined for a range. */
function pinnedVersion(pin: string): string | undefined {
  const version = pin.startsWith("npm:") ? pin.slice(pin.lastIndexOf("@") + 1) : pin;
  return /^\d+\.\d+\.\d+$/.test(version) ? version : undefined;
}

describe("the host versions the adapters are tested with", () => {
  it("reads a pin's exact version, and no version from a range", () => {
    expect(pinnedVersion("0.20.0")).toBe("0.20.0");
    expect(pinnedVersion("npm:ai@7.0.173")).toBe("7.0.173");
    expect(pinnedVersion("^1.24.0")).toBeUndefined();
    expect(pinnedVersion("workspace:^")).toBeUndefined();
  });

  for (const [name, hosts] of Object.entries(HOSTS)) {
    it(`${name}: each host is pinned exactly, installed as pinned, and named in the README`, () => {
      const dir = join(packages, name);
      const devDependencies = json(join(dir, "package.json")).devDependencies as Record<string, string>;
      const readme = readFileSync(join(dir, "README.md"), "utf8");
      for (const host of hosts) {
        const pin = devDependencies[host];
        expect(pin, `${name}: devDependencies["${host}"]`).toBeTypeOf("string");
        const version = pinnedVersion(pin as string);
        expect(version, `${name}: devDependencies["${host}"] = ${pin}`).toBeDefined();
        expect(json(join(dir, "node_modules", host, "package.json")).version, `${name}: installed ${host}`).toBe(version);
        expect(readme, `${name}/README.md names ${host} ${version}`).toContain(version);
      }
    });
  }
});
