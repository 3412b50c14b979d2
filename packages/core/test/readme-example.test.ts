import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const readme = readFileSync(join(packageDir, "README.md"), "utf8");
const work = mkdtempSync(join(tmpdir(), "retry-reflect-core-readme-"));

afterAll(() => rmSync(work, { recursive: true, force: true }));

function block(after: string, lang: string): string {
  const start = readme.indexOf(after);
  const fence = readme.indexOf(`\`\`\`${lang}\n`, start);
  const end = readme.indexOf("\n```", fence + 4);
  return readme.slice(fence + lang.length + 4, end + 1);
}

describe("the published package", () => {
  it("runs the README's example in a new project that depends only on @retry-reflect/core", () => {
    expect(existsSync(join(packageDir, "dist/index.js")), "build the package first (npm test does)").toBe(true);
    execFileSync("npm", ["pack", "--silent", "--pack-destination", work], { cwd: packageDir });
    const tarball = readdirSync(work).find((name) => name.endsWith(".tgz"));
    expect(tarball).toBeDefined();
    const project = join(work, "project");
    execFileSync("mkdir", ["-p", project]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "readme-user", private: true, type: "module" }));
    execFileSync("npm", ["install", "--silent", "--no-audit", "--no-fund", "--offline", join(work, tarball as string)], { cwd: project });
    const installed = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    expect(Object.keys(installed.dependencies)).toEqual(["@retry-reflect/core"]);
    expect(readdirSync(join(project, "node_modules")).filter((name) => !name.startsWith("."))).toEqual(["@retry-reflect"]);

    writeFileSync(join(project, "example.mjs"), block("## Usage", "js"));
    // consoleLogger writes WARN to stderr and INFO to stdout: merge both streams, in order.
    const output = execFileSync("sh", ["-c", "node example.mjs 2>&1"], { cwd: project, encoding: "utf8" });
    // The corrected call waits what is left of the 500 ms backoff: a little less than 500, by how
    // long the first call took on this machine (a loaded machine takes tens of ms).
    const waited = /wait_ms=(\d+)/.exec(output);
    expect(Number(waited?.[1])).toBeGreaterThan(0);
    expect(Number(waited?.[1])).toBeLessThanOrEqual(500);
    expect(output.replace(/wait_ms=\d+/, "wait_ms=500")).toBe(block("It prints:", "text"));
  });

  it("has no node: imports and no Node globals in its main entry (Deno, Bun, browsers)", () => {
    for (const file of ["dist/index.js", "dist/index.cjs", "dist/testing.js"]) {
      const code = readFileSync(join(packageDir, file), "utf8");
      expect(code, file).not.toMatch(/from\s+["']node:|require\(["']node:|\bprocess\.|\bBuffer\b/);
    }
    const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.sideEffects).toBe(false);
  });
});
