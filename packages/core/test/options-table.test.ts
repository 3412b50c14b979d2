// The options are documented where a user reads them: the options table (docs/options.md), the
// README's table of the options used most, and the JSDoc of `RetryReflectOptions` (what an editor
// shows). The table and the JSDoc must name every option, and every default any of them states as
// a value must be the one the code applies (DEFAULT_OPTIONS).

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_OPTIONS, IDEMPOTENCY_NAMES, OPTION_NAMES, TOOL_IDEMPOTENCY_NAMES, TOOL_POLICY_NAMES } from "../src/config/defaults.js";

const root = new URL("../", import.meta.url);
const FULL_TABLE = new URL("docs/options.md", root);
const README_TABLE = new URL("README.md", root);
const TYPES_FILE = new URL("src/config/options.ts", root);

interface Row {
  readonly name: string;
  readonly defaultText: string;
  readonly perTool: string;
}

/** The rows of the first markdown table of `url` whose header starts `| option | default | per tool |`. */
function optionsTable(url: URL): { file: string; rows: Row[] } {
  const lines = readFileSync(url, "utf8").split("\n");
  const start = lines.findIndex((line) => /^\|\s*option\s*\|\s*default\s*\|\s*per tool\s*\|/.test(line));
  if (start < 0) throw new Error(`no options table (| option | default | per tool | ...) in ${url.pathname}`);
  const rows: Row[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim());
    const name = /^`([^`]+)`$/.exec(cells[0] ?? "")?.[1];
    if (name === undefined) throw new Error(`${url.pathname}: a row without an option name: ${line.slice(0, 80)}`);
    rows.push({ name, defaultText: cells[1] ?? "", perTool: cells[2] ?? "" });
  }
  return { file: url.pathname, rows };
}

/** Each option of `RetryReflectOptions` / `PolicyOptions` with the text after its JSDoc's `@default`. */
function jsdocDefaults(): Map<string, string> {
  const source = readFileSync(TYPES_FILE, "utf8");
  const found = new Map<string, string>();
  for (const match of source.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*readonly (\w+)\?:/g)) {
    const tag = /@default\s+([^\n]*?)\s*(?:\*\/|\n|$)/.exec(match[1] ?? "");
    if (tag?.[1] !== undefined) found.set(match[2] as string, tag[1].replace(/\s*\*$/, "").trim());
  }
  return found;
}

const UNPARSED = Symbol("a default told in words");

/**
 * The value a default is written as: `3`, `15_000`, `"none"`, `true`, `[10_000, 30_000]`,
 * `{ ratio: 0.05 }`, `undefined`, inside backticks or bare, words after it ignored; UNPARSED for a
 * default told in words or by name ("none", "built-in", `DEFAULT_REFLECTION_PROMPT`).
 */
function writtenValueOf(text: string): unknown {
  const quoted = /^`([^`]+)`/.exec(text)?.[1];
  const written = (quoted ?? text.split(" (")[0] ?? "").trim();
  if (written === "undefined") return undefined;
  const json = written.replace(/(\d)_(?=\d)/g, "$1").replace(/([{,]\s*)(\w+):/g, '$1"$2":');
  try {
    return JSON.parse(json);
  } catch {
    return UNPARSED;
  }
}

/** What the code applies for `name` (`idempotency.x` reads the idempotency defaults). */
function codeDefault(name: string): unknown {
  const [head, member] = name.split(".");
  const defaults = DEFAULT_OPTIONS as unknown as Record<string, unknown>;
  if (member === undefined) return defaults[head as string];
  return (defaults[head as string] as Record<string, unknown>)[member];
}

/** Every documented name: the plugin's options, with `idempotency` as its members. */
const ALL_NAMES = [
  ...[...OPTION_NAMES].filter((name) => name !== "idempotency"),
  ...[...IDEMPOTENCY_NAMES].map((name) => `idempotency.${name}`),
];

/** The checks every options table passes: its defaults are the code's, its "per tool" column the policy's. */
function checkRows(file: string, rows: readonly Row[]): { stated: number } {
  const stated = rows.map((row) => ({ name: row.name, value: writtenValueOf(row.defaultText) })).filter((row) => row.value !== UNPARSED);
  for (const row of stated) expect(row.value, `${file}: ${row.name}`).toEqual(codeDefault(row.name));
  for (const row of rows) {
    const [head, member] = row.name.split(".");
    const perTool = member === undefined ? TOOL_POLICY_NAMES.has(head as string) : TOOL_IDEMPOTENCY_NAMES.has(member);
    if (row.name === "tools" || row.name === "toolEffects") continue; // "—" and `effect`: told in words
    expect(row.perTool, `${file}: ${row.name}`).toBe(perTool ? "yes" : "no");
  }
  return { stated: stated.length };
}

describe("the options table (docs/options.md)", () => {
  const { file, rows } = optionsTable(FULL_TABLE);

  it("has one row per option, and no row for a name that is not one", () => {
    const names = rows.map((row) => row.name);
    expect(new Set(names).size, `${file}: a row twice`).toBe(names.length);
    expect([...names].sort(), file).toEqual([...ALL_NAMES].sort());
  });

  it("states each default the code applies, where it writes a value, and which options a tool's policy may set", () => {
    expect(checkRows(file, rows).stated).toBeGreaterThan(30); // most defaults are values, not words
  });
});

describe("the README's table of the options used most", () => {
  const { file, rows } = optionsTable(README_TABLE);

  it("names options only, each once, and states the defaults the code applies", () => {
    const names = rows.map((row) => row.name);
    expect(new Set(names).size, `${file}: a row twice`).toBe(names.length);
    expect(names.filter((name) => !ALL_NAMES.includes(name))).toEqual([]);
    expect(checkRows(file, rows).stated).toBeGreaterThan(10);
  });
});

describe("the JSDoc of the options (what an editor shows)", () => {
  const defaults = jsdocDefaults();

  it("gives every option a @default, but the few whose comment tells it in words", () => {
    const inWords = ["classifyError", "clock", "random"];
    expect([...OPTION_NAMES].filter((name) => !defaults.has(name) && !inWords.includes(name))).toEqual([]);
  });

  it("states each default the code applies, where it writes a value", () => {
    let checked = 0;
    for (const [name, text] of defaults) {
      const value = writtenValueOf(text);
      if (value === UNPARSED || name === "idempotency") continue;
      checked++;
      expect(value, `@default of ${name}: ${text}`).toEqual(codeDefault(name));
    }
    expect(checked).toBeGreaterThan(25);
  });
});
