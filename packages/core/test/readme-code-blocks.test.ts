import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Every TypeScript block of every README (and of every page in a package's `docs/`) is typechecked
// against the built packages (their `dist` types, as a user gets them), and every JavaScript block
// is run with node, offline. What is checked is what the reader sees: nothing is put before a block.
//
// The convention (also in the root README's Development section): an HTML comment on the line
// before a fence (blank lines between are allowed) changes what is done with the block.
//
//   <!-- check: output -->                   before a `text` block: the exact output (stdout and
//                                            stderr, in order) of the JavaScript block above it
//   <!-- check: output (varies: wait_ms) --> the same, but the numbers of these `key=N` fields may differ
//   <!-- check: skip (why) -->               neither typechecked nor run; the reason is required
//
// Any other `check:` directive fails the test (there is no hidden prelude: a block shows its imports
// and the definitions it needs). Blocks are checked each on its own, as its own ES module. Fences
// other than ts/typescript and js/mjs (sh, text, a bare fence for diagrams and transcripts) are not
// checked.
//
// The opening rule: in the root README and in every package's README, the first block that is
// typechecked or run (the opening example, never skipped) starts within the first 40 lines. A README
// whose subject is a command (the demo's, the bench's) may open with a `sh` block of the command and
// a `text` sample of its output instead.
//
// The temporary project lives in a git-ignored folder of the demo app: from there node and tsc
// resolve the workspace packages (symlinks to their built `dist`) and everything the demo depends
// on (LangChain, the AI SDK, MCP, the OpenAI Agents SDK, Mastra, the OpenTelemetry SDK, Redis
// clients), so nothing is installed.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const tsc = join(root, "node_modules/.bin/tsc");
const scratch = join(root, "apps/demo/.readme-check");

type Kind = "ts" | "js";

interface Directive {
  readonly type: "output" | "skip";
  readonly text: string;
}

interface Block {
  readonly readme: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  readonly directive: Directive | undefined;
}

/**
 * Every README a newcomer reads (the root one, the packages', the apps' and the bench's), and the
 * pages of a package's `docs/` folder, which its README links to (`packages/core/docs/*.md`).
 */
function readmes(): string[] {
  const found = ["README.md"];
  for (const parent of ["packages", "apps"]) {
    for (const name of readdirSync(join(root, parent)).sort()) {
      if (existsSync(join(root, parent, name, "README.md"))) found.push(`${parent}/${name}/README.md`);
      const docs = join(root, parent, name, "docs");
      if (!existsSync(docs)) continue;
      for (const page of readdirSync(docs).sort()) if (page.endsWith(".md")) found.push(`${parent}/${name}/docs/${page}`);
    }
  }
  if (existsSync(join(root, "bench/README.md"))) found.push("bench/README.md");
  return found;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/;

/** The `<!-- check: ... -->` comment that ends on the last non-blank line before `index`, if any. */
function directiveBefore(lines: readonly string[], index: number, where: string): Directive | undefined {
  let end = index - 1;
  while (end >= 0 && (lines[end] ?? "").trim() === "") end--;
  if (end < 0 || !(lines[end] ?? "").trim().endsWith("-->")) return undefined;
  let start = end;
  while (start >= 0 && !(lines[start] ?? "").includes("<!--")) start--;
  if (start < 0) return undefined;
  const comment = lines
    .slice(start, end + 1)
    .join("\n")
    .trim();
  const match = /^<!--\s*check:\s*([\s\S]*?)\s*-->$/.exec(comment);
  if (!match) return undefined;
  const body = match[1] ?? "";
  const [, type = "", rest = ""] = /^(\S+)\s*([\s\S]*)$/.exec(body) ?? [];
  if (type === "output") {
    // `output (varies: wait_ms, ...)`: the numbers of these `key=N` fields may differ from the README's.
    const varies = /^(?:\(varies:\s*([\w.]+(?:\s*,\s*[\w.]+)*)\))?$/.exec(rest);
    if (!varies) throw new Error(`${where}: expected "check: output" or "check: output (varies: key, ...)": ${comment}`);
    return { type, text: varies[1] ?? "" };
  }
  if (type === "skip") {
    const reason = /^\((.+)\)$/s.exec(rest)?.[1]?.trim();
    if (!reason) throw new Error(`${where}: "check: skip" needs a reason in parentheses: ${comment}`);
    return { type, text: reason };
  }
  throw new Error(
    `${where}: unknown directive ${comment} (known: output, output (varies: key, ...), skip (reason); there is no prelude: show what a block needs in it)`,
  );
}

function blocksOf(readme: string): Block[] {
  const lines = readFileSync(join(root, readme), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = FENCE.exec(lines[index] ?? "");
    if (!open) continue;
    const [, indent = "", fence = "", lang = ""] = open;
    const body: string[] = [];
    let close = index + 1;
    for (; close < lines.length; close++) {
      const line = lines[close] ?? "";
      if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, "") === "") break;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    const where = `${readme}:${index + 1}`;
    blocks.push({ readme, line: index + 1, lang, code: `${body.join("\n")}\n`, directive: directiveBefore(lines, index, where) });
    index = close;
  }
  return blocks;
}

function kindOf(block: Block): Kind | undefined {
  if (block.lang === "ts" || block.lang === "typescript") return "ts";
  if (block.lang === "js" || block.lang === "mjs") return "js";
  return undefined;
}

function fileNameOf(block: Block, extension: string): string {
  return `${block.readme.replace(/\/README\.md$|README\.md$/, "").replace(/[/.]/g, "_") || "root"}.L${block.line}.${extension}`;
}

interface Source {
  readonly block: Block;
  readonly file: string;
}

function sourceOf(block: Block, extension: string): Source & { readonly text: string } {
  return { block, file: fileNameOf(block, extension), text: block.code };
}

interface TscError {
  readonly readme: string;
  readonly text: string;
}

/** A file that must fail the typecheck (an implicit `any`): proves that tsc ran, and strictly. */
const CANARY = { file: "canary.ts", text: "export function canary(value) {\n  return value;\n}\n" };

/** Maps `file.ts(12,5): error TS2304: ...` back to the README line the error is on. */
function tscErrors(output: string, sources: ReadonlyMap<string, Source>): TscError[] {
  const errors: TscError[] = [];
  for (const line of output.split("\n")) {
    if (/^\/.*\.[cm]?[jt]s$/.test(line.trim())) continue; // --listFiles
    const match = /^(.+?)\((\d+),(\d+)\): (error TS\d+: .*)$/.exec(line);
    if (!match) {
      const last = errors.at(-1);
      if (last && line.startsWith(" ")) errors[errors.length - 1] = { ...last, text: `${last.text}\n${line}` };
      else if (line.trim() !== "") errors.push({ readme: "(tsc)", text: line });
      continue;
    }
    const [, file = "", row = "0", column = "", message = ""] = match;
    if (file === CANARY.file) {
      errors.push({ readme: CANARY.file, text: message });
      continue;
    }
    const source = sources.get(file);
    if (!source) {
      errors.push({ readme: "(tsc)", text: line });
      continue;
    }
    const place = `${source.block.readme}:${source.block.line + Number(row)}:${column}`;
    errors.push({ readme: source.block.readme, text: `${place} ${message}` });
  }
  return errors;
}

/**
 * At most this many blocks run at once: each opening example loads a whole host (LangChain, Mastra,
 * the Agents SDK), and starting them all at once beside tsc on a 2-core machine only thrashes.
 */
const RUNNING_AT_ONCE = Math.max(2, availableParallelism());
let running = 0;
const waiting: (() => void)[] = [];

async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= RUNNING_AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Runs a file with node; stdout and stderr go to one pipe, in the order they were written. */
function runNode(cwd: string, file: string): Promise<{ code: number | null; output: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", 'exec "$0" "$1" 2>&1', process.execPath, file], { cwd, stdio: ["ignore", "pipe", "inherit"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output: Buffer.concat(chunks).toString("utf8"), ms: Date.now() - started });
    });
  });
}

const blocks = readmes().flatMap(blocksOf);
const checked = blocks.filter((block) => kindOf(block) !== undefined && block.directive?.type !== "skip");
const tsBlocks = checked.filter((block) => kindOf(block) === "ts");
const jsBlocks = checked.filter((block) => kindOf(block) === "js");

/** The `output` block that follows a JS block (before the next JS/TS block of its README). */
function expectedOutputOf(block: Block): Block | undefined {
  const after = blocks.filter((other) => other.readme === block.readme && other.line > block.line);
  for (const other of after) {
    if (other.directive?.type === "output") return other;
    if (kindOf(other) !== undefined) return undefined;
  }
  return undefined;
}

/** Output with the numbers of the fields an `output (varies: ...)` block names replaced by `N`. */
function normalised(output: string, varies: string): string {
  let text = output;
  for (const key of varies.split(",").map((name) => name.trim())) {
    if (key !== "") text = text.replaceAll(new RegExp(`\\b${key.replaceAll(".", "\\.")}=\\d+`, "g"), `${key}=N`);
  }
  return text;
}

/** A heading's anchor as GitHub makes it: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replaceAll(" ", "-");
}

/** The prose of a Markdown file: its lines outside fenced code blocks. */
function proseOf(file: string): string[] {
  let fence = "";
  return readFileSync(join(root, file), "utf8")
    .split("\n")
    .filter((line) => {
      const open = FENCE.exec(line);
      if (open && (fence === "" || line.trim().replace(/[`~]/g, "") === "")) {
        fence = fence === "" ? (open[2] ?? "") : "";
        return false;
      }
      return fence === "";
    });
}

/** The relative links of a page (`[text](path#anchor)`) that lead nowhere: no such file, or no such heading. */
function brokenLinksOf(file: string): string[] {
  const broken: string[] = [];
  for (const line of proseOf(file)) {
    for (const [, link = ""] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
      const [path = "", anchor] = link.split("#");
      const target = path === "" ? file : join(dirname(file), path);
      if (!existsSync(join(root, target))) broken.push(`${link} (no file ${target})`);
      else if (anchor !== undefined && target.endsWith(".md")) {
        const headings = proseOf(target).flatMap((text) => /^#{1,6} (.*)$/.exec(text)?.[1] ?? []);
        if (!headings.some((heading) => anchorOf(heading) === anchor)) broken.push(`${link} (no heading #${anchor} in ${target})`);
      }
    }
  }
  return broken;
}

let project = "";
let typecheck: { errors: TscError[]; files: string[]; ms: number } = { errors: [], files: [], ms: 0 };
const runs = new Map<Block, Promise<{ code: number | null; output: string; ms: number }>>();

beforeAll(async () => {
  for (const name of ["core", "langchain-adapter", "otel", "redis", "ai-sdk", "mcp", "openai-agents", "mastra"]) {
    expect(existsSync(join(root, "packages", name, "dist/index.d.ts")), `build packages/${name} first (npm test does)`).toBe(true);
  }
  mkdirSync(scratch, { recursive: true });
  project = mkdtempSync(join(scratch, "code-blocks-"));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "readme-code-blocks", private: true, type: "module" }));
  // A user's strict TypeScript project on Node, as `tsc --init` makes it (`skipLibCheck: true`:
  // `false` passes too, but checking LangChain's declarations takes the run from ~5 s to ~14 s).
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        lib: ["ES2022"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        moduleDetection: "force",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ["node"],
      },
      include: ["*.ts"],
    }),
  );
  writeFileSync(join(project, CANARY.file), CANARY.text);
  const sources = new Map<string, Source>();
  for (const block of tsBlocks) {
    const source = sourceOf(block, "ts");
    writeFileSync(join(project, source.file), source.text);
    sources.set(source.file, source);
  }
  for (const block of jsBlocks) {
    const source = sourceOf(block, "mjs");
    writeFileSync(join(project, source.file), source.text);
    runs.set(
      block,
      limited(() => runNode(project, source.file)),
    );
  }
  const started = Date.now();
  const { code, output } = await new Promise<{ code: unknown; output: string }>((resolve) => {
    execFile(
      tsc,
      ["-p", "tsconfig.json", "--pretty", "false", "--listFiles"],
      { cwd: project, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error?.code ?? 0, output: `${stdout}${stderr}` }),
    );
  });
  const errors = tscErrors(output, sources);
  // tsc exits 2 when it reports errors (the canary's at least); anything else is tsc failing.
  if (code !== 2)
    errors.push({ readme: "(tsc)", text: `tsc exited with ${String(code)} (expected 2, for the canary): ${output.slice(0, 2000)}` });
  const files = output.split("\n").filter((line) => /^\/.*\.[cm]?ts$/.test(line.trim()));
  typecheck = { errors, files, ms: Date.now() - started };
  await Promise.all(runs.values());
}, 240_000);

afterAll(() => {
  if (project !== "") rmSync(project, { recursive: true, force: true });
  // The scratch folder itself stays (git-ignored): another README test may be creating its project in it.
});

describe("README code blocks", () => {
  it("finds the blocks, and every skip says why", () => {
    expect(tsBlocks.length).toBeGreaterThanOrEqual(10);
    expect(jsBlocks.length).toBeGreaterThanOrEqual(1);
    const skipped = blocks.filter((block) => block.directive?.type === "skip");
    for (const block of skipped) expect(block.directive?.text, `${block.readme}:${block.line}`).toMatch(/\w{3,}/);
    // Skips stay rare: a block is made complete (its imports and definitions shown) rather than skipped.
    expect(skipped.length).toBeLessThanOrEqual(3);
    for (const block of blocks.filter((candidate) => candidate.directive?.type === "output")) {
      expect(block.lang, `${block.readme}:${block.line}: an output block is text`).toBe("text");
    }
  });

  it.each(readmes().filter((readme) => readme === "README.md" || /^packages\/[^/]+\/README\.md$/.test(readme)))(
    "%s opens with its example: a block that is run or typechecked starts within the first 40 lines",
    (readme) => {
      const first = checked.find((block) => block.readme === readme);
      expect(first, `${readme}: no ts/js block is checked`).toBeDefined();
      // The opening example is never a skipped block: the first ts/js block of the README is checked.
      expect(blocks.find((block) => block.readme === readme && kindOf(block) !== undefined)).toBe(first);
      expect(first?.line, `${readme}: the first checked block starts at line ${first?.line}`).toBeLessThanOrEqual(40);
    },
  );

  it("no page has a hidden prelude", () => {
    for (const readme of readmes()) expect(readFileSync(join(root, readme), "utf8"), readme).not.toMatch(/<!--\s*check:\s*prelude/);
  });

  it("typechecks strictly, against the packages' built declarations (dist), not their sources", () => {
    expect(typecheck.errors.filter((error) => error.readme === CANARY.file).map((error) => error.text)).toEqual([
      "error TS7006: Parameter 'value' implicitly has an 'any' type.",
    ]);
    const ours = typecheck.files.map((file) => relative(root, file)).filter((file) => file.startsWith("packages/"));
    for (const entry of [
      "packages/core/dist/index.d.ts",
      "packages/langchain-adapter/dist/index.d.ts",
      "packages/otel/dist/index.d.ts",
      "packages/redis/dist/index.d.ts",
      "packages/ai-sdk/dist/index.d.ts",
      "packages/mcp/dist/index.d.ts",
      "packages/openai-agents/dist/index.d.ts",
      "packages/mastra/dist/index.d.ts",
    ]) {
      expect(ours).toContain(entry);
    }
    expect(ours.filter((file) => !file.includes("/dist/"))).toEqual([]);
  });

  it.each(readmes())("the TypeScript blocks of %s typecheck (strict, NodeNext, against dist)", (readme) => {
    const errors = typecheck.errors.filter((error) => error.readme === readme || error.readme === "(tsc)");
    expect(errors.map((error) => error.text).join("\n\n")).toBe("");
  });

  it.each(jsBlocks.map((block) => [`${block.readme}:${block.line}`, block] as const))(
    "the JavaScript block %s runs with node (and prints what the README says)",
    async (_where, block) => {
      const run = await runs.get(block);
      expect(run?.code, run?.output).toBe(0);
      const expected = expectedOutputOf(block);
      if (expected !== undefined) {
        const varies = expected.directive?.text ?? "";
        expect(normalised(run?.output ?? "", varies), `${expected.readme}:${expected.line}`).toBe(normalised(expected.code, varies));
      }
    },
  );

  it.each(readmes())("the relative links of %s lead to a file, and to a heading of it", (readme) => {
    expect(brokenLinksOf(readme)).toEqual([]);
  });

  it("reports its time", () => {
    console.log(
      `README code blocks: ${tsBlocks.length} TypeScript blocks typechecked in ${typecheck.ms} ms; ${jsBlocks.length} JavaScript run; project ${relative(root, project)}`,
    );
  });
});
