import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The core's public surface, as a user gets it: the names each entry of `package.json` "exports"
// exports, read from the built `dist` types (types included). The main entry holds what an agent
// developer writes, at most 40 names; every other entry serves one audience (adapter, observer and
// store authors, building blocks, tests) with at most 25; and a name lives in one entry only.

const core = fileURLToPath(new URL("../", import.meta.url));
const MAIN_LIMIT = 40;
const AUDIENCE_LIMIT = 25;

interface Conditions {
  readonly import: { readonly types: string };
}

function exportedNames(): Map<string, string[]> {
  const manifest = JSON.parse(readFileSync(`${core}package.json`, "utf8")) as { exports: Record<string, Conditions | string> };
  const entries = Object.entries(manifest.exports).flatMap(([path, target]) =>
    typeof target === "string" ? [] : [[path, `${core}${target.import.types}`] as const],
  );
  for (const [path, file] of entries) {
    if (!existsSync(file)) throw new Error(`${file} (entry "${path}") is missing: build the core first`);
  }
  const program = ts.createProgram(
    entries.map(([, file]) => file),
    // Only the entries' own exports are read: the standard library is not needed (and slow to load).
    { noEmit: true, skipLibCheck: true, noLib: true, types: [] },
  );
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const [path, file] of entries) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`no module in ${file}`);
    names.set(
      path,
      checker.getExportsOfModule(module).map((symbol) => symbol.name),
    );
  }
  return names;
}

describe("the core's entries", () => {
  const entries = exportedNames();

  it("are the main one and one per audience", () => {
    expect([...entries.keys()].sort()).toEqual(
      [".", "./adapter", "./adapter/failures", "./adapter/options", "./events", "./primitives", "./stores", "./testing"].sort(),
    );
  });

  it(`the main entry exports at most ${MAIN_LIMIT} names, every other one at most ${AUDIENCE_LIMIT}`, () => {
    const over = [...entries].filter(([path, names]) => names.length > (path === "." ? MAIN_LIMIT : AUDIENCE_LIMIT));
    expect(over.map(([path, names]) => `${path}: ${names.length}`)).toEqual([]);
  });

  it("export each name from one entry only", () => {
    const where = new Map<string, string[]>();
    for (const [path, names] of entries) for (const name of names) where.set(name, [...(where.get(name) ?? []), path]);
    expect([...where].filter(([, paths]) => paths.length > 1)).toEqual([]);
  });
});
