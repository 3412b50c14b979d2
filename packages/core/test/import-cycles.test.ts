// The core's layering (issue 52): no import cycle among its source files, and no source file over
// 250 lines. Type-only imports are left out: they vanish at build time and order nothing.

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

/** The files `file` imports or re-exports values from (relative specifiers; `import type` / `export type` left out). */
function valueImports(file: string): string[] {
  const code = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of code.matchAll(/^(import|export)\s+(type\s+)?([^;]*?)\s+from\s+"(\.[^"]+)";/gms)) {
    if (match[2] !== undefined) continue; // `import type { ... }`
    const names = match[3] ?? "";
    // `import { type A, type B }` imports types only.
    const braced = /^\{([^}]*)\}$/.exec(names.trim())?.[1];
    if (braced?.split(",").every((name) => name.trim() === "" || name.trim().startsWith("type "))) continue;
    found.push(resolve(dirname(file), (match[4] as string).replace(/\.js$/, ".ts")));
  }
  return found;
}

describe("the core's source files", () => {
  const files = sourceFiles(SRC);
  const graph = new Map(files.map((file) => [file, valueImports(file)]));

  it("import one another without a cycle", () => {
    const cycles: string[] = [];
    const state = new Map<string, "visiting" | "done">();
    const path: string[] = [];
    const visit = (file: string): void => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "visiting") {
        cycles.push([...path.slice(path.indexOf(file)), file].map((entry) => relative(SRC, entry)).join(" → "));
        return;
      }
      state.set(file, "visiting");
      path.push(file);
      for (const next of graph.get(file) ?? []) visit(next);
      path.pop();
      state.set(file, "done");
    };
    for (const file of files) visit(file);
    expect(cycles).toEqual([]);
  });

  it("each resolve to a file of the core (the check above saw every edge)", () => {
    const known = new Set(files);
    const unresolved = [...graph].flatMap(([file, imports]) =>
      imports.filter((target) => !known.has(target)).map((target) => `${relative(SRC, file)} → ${relative(SRC, target)}`),
    );
    expect(unresolved).toEqual([]);
    expect([...graph.values()].reduce((sum, imports) => sum + imports.length, 0)).toBeGreaterThan(100);
  });

  it("are at most 250 lines each", () => {
    const long = files
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, "utf8").split("\n").length - 1 }))
      .filter((entry) => entry.lines > 250);
    expect(long).toEqual([]);
  });
});
