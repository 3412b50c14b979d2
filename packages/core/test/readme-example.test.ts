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

/** The body of the first fenced block of `lang` at or after `from`. */
function block(lang: string, from = 0): { code: string; end: number } {
  const fence = readme.indexOf(`\`\`\`${lang}\n`, from);
  expect(fence, `a \`\`\`${lang} block in the README`).toBeGreaterThanOrEqual(0);
  const end = readme.indexOf("\n```", fence + 4);
  return { code: readme.slice(fence + lang.length + 4, end + 1), end };
}

/** The README's opening example (its first `js` block) and the output shown under it. */
function example(): { code: string; output: string } {
  const code = block("js");
  const marker = readme.indexOf("<!-- check: output", code.end);
  return { code: code.code, output: block("text", marker).code };
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

    const { code, output: shown } = example();
    writeFileSync(join(project, "example.mjs"), code);
    // consoleLogger writes WARN to stderr and INFO to stdout: merge both streams, in order.
    const output = execFileSync("sh", ["-c", "node example.mjs 2>&1"], { cwd: project, encoding: "utf8" });
    // The corrected call waits what is left of the 500 ms backoff: a little less than 500, by how
    // long the first call took on this machine (a loaded machine takes tens of ms).
    const waited = /wait_ms=(\d+)/.exec(output);
    expect(Number(waited?.[1])).toBeGreaterThan(0);
    expect(Number(waited?.[1])).toBeLessThanOrEqual(500);
    expect(output.replace(/wait_ms=\d+/, "wait_ms=500")).toBe(shown);
  }, 120_000); // npm pack and an offline npm install: seconds alone, tens of seconds on a loaded machine

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
