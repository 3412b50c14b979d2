import { readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The layout issue 21 asks for, kept: no core source file over 250 lines, and no two source files
// (in any package) whose names are the same words in another order (`call-run.ts` beside
// `run-call.ts`), the pairs a newcomer cannot tell apart.

const packages = fileURLToPath(new URL("../../", import.meta.url));
const MAX_LINES = 250;

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

function lineCount(text: string): number {
  const lines = text.split("\n");
  return text.endsWith("\n") ? lines.length - 1 : lines.length;
}

/** Same words, another order: `call-run` and `run-call`; `outcome` and `outcomes` are not (different words). */
function reorderedPairs(files: readonly string[]): string[][] {
  const byWords = new Map<string, Set<string>>();
  for (const file of files) {
    const name = basename(file, ".ts").replace(/\.(test|d)$/, "");
    const words = name.split(/[-_.]/).filter((word) => word !== "");
    if (words.length < 2) continue;
    const key = [...words].sort().join("-");
    const names = byWords.get(key) ?? new Set<string>();
    names.add(name);
    byWords.set(key, names);
  }
  return [...byWords.values()].filter((names) => names.size > 1).map((names) => [...names].sort());
}

describe("source layout", () => {
  it(`no core source file is over ${MAX_LINES} lines`, () => {
    const core = join(packages, "core/src");
    const long = sourcesUnder(core)
      .map((file) => ({ file: relative(core, file), lines: lineCount(readFileSync(file, "utf8")) }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it("no two source files of the packages are named with the same words reordered", () => {
    const files = readdirSync(packages).flatMap((name) => {
      try {
        return sourcesUnder(join(packages, name, "src"));
      } catch {
        return []; // not a package with sources
      }
    });
    expect(files.length).toBeGreaterThan(100);
    expect(reorderedPairs(files)).toEqual([]);
  });

  it("tells reordered names apart from other names (the check can fail)", () => {
    expect(reorderedPairs(["a/call-run.ts", "b/run-call.ts", "c/outcome.ts", "d/outcomes.ts", "e/run-call.ts"])).toEqual([
      ["call-run", "run-call"],
    ]);
  });
});
