// The options are documented where a user reads them: the options table (docs/options.md), the
// README's table of the options used most, and the JSDoc of `RetryReflectOptions` (what an editor
// shows). The code has one table of the options (src/config/option-table.ts: each option's default,
// check, and whether a tool may set it), from which DEFAULT_OPTIONS and every check derive. The docs'
// table must have its rows, in its order; the docs' table and the JSDoc must name every option; and
// every default any of them states as a value, and every "per tool", must be the code table's.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { IDEMPOTENCY_TABLE, OPTION_TABLE, type OptionRow } from "../src/config/option-table.js";
import { DEFAULT_OPTIONS } from "../src/index.js";

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

/** Where the members of the nested option types are documented: `idempotency.keyField`, `retryBudget.ratio`. */
const NESTED: Readonly<Record<string, string>> = { IdempotencyOptions: "idempotency.", RetryBudgetOptions: "retryBudget." };

/** Each option of `RetryReflectOptions` / `PolicyOptions` (and of the nested types, by path) with the text after its JSDoc's `@default`. */
function jsdocDefaults(): Map<string, string> {
  const source = readFileSync(TYPES_FILE, "utf8");
  const found = new Map<string, string>();
  for (const block of source.split(/^export interface /m).slice(1)) {
    const prefix = NESTED[/^\w+/.exec(block)?.[0] ?? ""] ?? "";
    for (const match of block.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*readonly (\w+)\?:/g)) {
      const tag = /@default\s+([^\n]*?)\s*(?:\*\/|\n|$)/.exec(match[1] ?? "");
      if (tag?.[1] !== undefined) found.set(prefix + (match[2] as string), tag[1].replace(/\s*\*$/, "").trim());
    }
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

/** Every documented name, in the code table's order: the plugin's options, with `idempotency` as its members. */
const ALL_NAMES = Object.keys(OPTION_TABLE).flatMap((name) =>
  name === "idempotency" ? Object.keys(IDEMPOTENCY_TABLE).map((member) => `idempotency.${member}`) : [name],
);

/** The code table's row of `name` (`idempotency.x`: the idempotency table's). */
function rowOf(name: string): OptionRow {
  const [head, member] = name.split(".");
  const table: Readonly<Record<string, OptionRow>> = member === undefined ? OPTION_TABLE : IDEMPOTENCY_TABLE;
  return table[(member ?? head) as string] as OptionRow;
}

/** What the code applies for `name`: the row's default (none for a default told in words); `retryBudget.x`: the default budget's member. */
function codeDefault(name: string): unknown {
  const [head, member] = name.split(".");
  if (head === "retryBudget" && member !== undefined) return (DEFAULT_OPTIONS.retryBudget as Readonly<Record<string, unknown>>)[member];
  return rowOf(name).default;
}

/** The checks every options table passes: its defaults are the code's, its "per tool" column the policy's. */
function checkRows(file: string, rows: readonly Row[]): { stated: number } {
  const stated = rows.map((row) => ({ name: row.name, value: writtenValueOf(row.defaultText) })).filter((row) => row.value !== UNPARSED);
  for (const row of stated) expect(row.value, `${file}: ${row.name}`).toEqual(codeDefault(row.name));
  for (const row of rows) {
    if (row.name === "tools" || row.name === "toolEffects") continue; // "—" and `effect`: told in words
    expect(row.perTool, `${file}: ${row.name}`).toBe(rowOf(row.name).perTool === true ? "yes" : "no");
  }
  return { stated: stated.length };
}

describe("DEFAULT_OPTIONS", () => {
  it("is the code table's defaults (the rows that write one as a value), frozen", () => {
    for (const name of ALL_NAMES) {
      const [head, member] = name.split(".") as [string, string | undefined];
      const defaults = (member === undefined ? DEFAULT_OPTIONS : DEFAULT_OPTIONS.idempotency) as Readonly<Record<string, unknown>>;
      const row = rowOf(name);
      expect((member ?? head) in defaults, name).toBe("default" in row);
      expect(defaults[member ?? head], name).toBe(row.default);
    }
    expect(Object.keys(DEFAULT_OPTIONS).every((name) => name in OPTION_TABLE)).toBe(true);
    for (const value of [DEFAULT_OPTIONS, DEFAULT_OPTIONS.idempotency, DEFAULT_OPTIONS.attemptTimeoutMs, DEFAULT_OPTIONS.includeTools]) {
      expect(Object.isFrozen(value)).toBe(true);
    }
  });
});

describe("the options table (docs/options.md)", () => {
  const { file, rows } = optionsTable(FULL_TABLE);

  it("has one row per option, and no row for a name that is not one, in the code table's order", () => {
    const names = rows.map((row) => row.name);
    expect(new Set(names).size, `${file}: a row twice`).toBe(names.length);
    expect([...names].sort(), file).toEqual([...ALL_NAMES].sort());
    expect(names, file).toEqual(ALL_NAMES);
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
    expect(Object.keys(OPTION_TABLE).filter((name) => !defaults.has(name) && !inWords.includes(name))).toEqual([]);
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
    // The nested types' members are checked too (a stale `@default` there is what an editor shows).
    expect([...defaults.keys()].filter((name) => name.includes("."))).toEqual(
      expect.arrayContaining(["idempotency.keyField", "idempotency.maxResultBytes", "retryBudget.ratio", "retryBudget.windowMs"]),
    );
  });
});
