// The walk's figures, from what the driver recorded: the steps in core and adapter sources, their
// files collapsed into segments, entries per core file, crossings, and two cross-checks against V8
// precise coverage of the same window.
import { SourceMap } from "node:module";
import type { CoveredFunction, Step, WalkRecord } from "./walk-types.js";

export type Side = "core" | "adapter";

/** Which side a script URL is on (`root` holds packages/core/src and packages/langchain-adapter/src), if any. */
export function sideOf(root: string, url: string): { side: Side; file: string } | undefined {
  const core = `${root}packages/core/src/`;
  const adapter = `${root}packages/langchain-adapter/src/`;
  if (url.startsWith(core)) return { side: "core", file: `core/src/${url.slice(core.length)}` };
  if (url.startsWith(adapter)) return { side: "adapter", file: `langchain-adapter/src/${url.slice(adapter.length)}` };
  return undefined;
}

export interface Located extends Step {
  readonly side: Side;
  readonly file: string;
  /** The step's offset in the generated script. */
  readonly offset: number;
  /** 1-based line in the TypeScript source (through tsx's inline source map), else in the generated code. */
  readonly tsLine: number;
  /** The innermost function (of the coverage's list) holding the step. */
  readonly fn: CoveredFunction | undefined;
}

export interface Segment {
  readonly side: Side;
  readonly file: string;
  readonly steps: Located[];
}

export interface FileRow {
  /** Segments of the file in the walk: steps in it whose previous step was in another file. */
  entries: number;
  steps: number;
  /** Calls of the file's functions in the window (coverage). */
  calls: number;
}

export interface Walk {
  readonly located: readonly Located[];
  /** Steps in code tsx generated (no source line), left out of the walk. */
  readonly generatedSteps: number;
  readonly segments: readonly Segment[];
  readonly coreFiles: ReadonlyMap<string, FileRow>;
  readonly adapterToCore: number;
  readonly coreToAdapter: number;
  readonly crossings: number;
  /** Core/adapter functions that ran in the window (coverage), and those of them with no step. */
  readonly functionsRan: readonly CoveredFunction[];
  readonly functionsMissed: readonly CoveredFunction[];
  /** Break locations in code that ran (innermost coverage range count > 0), and those never paused at. */
  readonly locationsRan: number;
  readonly locationsMissed: readonly string[];
}

interface Script {
  readonly starts: readonly number[];
  readonly map: SourceMap | undefined;
  readonly functions: readonly CoveredFunction[];
  /** Every coverage range of the script (functions and blocks), for the count at an offset. */
  readonly ranges: readonly { readonly startOffset: number; readonly endOffset: number; readonly count: number }[];
}

function lineStarts(source: string): number[] {
  const starts = [0];
  for (let index = source.indexOf("\n"); index !== -1; index = source.indexOf("\n", index + 1)) starts.push(index + 1);
  return starts;
}

/** The 0-based line of an offset. */
function lineOf(starts: readonly number[], offset: number): number {
  let line = 0;
  while (line + 1 < starts.length && (starts[line + 1] ?? Number.POSITIVE_INFINITY) <= offset) line += 1;
  return line;
}

function sourceMapOf(source: string): SourceMap | undefined {
  const match = /\/\/# sourceMappingURL=data:application\/json;(?:charset=utf-8;)?base64,([A-Za-z0-9+/=]+)\s*$/.exec(source);
  if (match?.[1] === undefined) return undefined;
  return new SourceMap(JSON.parse(Buffer.from(match[1], "base64").toString("utf8")));
}

function innermost<T extends { readonly startOffset: number; readonly endOffset: number }>(
  items: readonly T[],
  offset: number,
): T | undefined {
  let found: T | undefined;
  for (const item of items) {
    if (item.startOffset <= offset && offset < item.endOffset) {
      if (found === undefined || item.endOffset - item.startOffset < found.endOffset - found.startOffset) found = item;
    }
  }
  return found;
}

/** 1-based TypeScript line of a generated position; undefined for code tsx generated (esbuild's `__name` helper). */
function tsLineOf(script: Script, line: number, column: number): number | undefined {
  if (script.map === undefined) return line + 1;
  const entry = script.map.findEntry(line, column) as { originalLine?: number };
  return entry.originalLine === undefined ? undefined : entry.originalLine + 1;
}

export function analyse(root: string, record: WalkRecord): Walk {
  const scripts = new Map<string, Script>();
  for (const [scriptId, { source }] of Object.entries(record.sources)) {
    const functions = record.coverage.filter((fn) => fn.scriptId === scriptId);
    const ranges = functions.flatMap((fn) => [fn, ...fn.blocks]);
    scripts.set(scriptId, { starts: lineStarts(source), map: sourceMapOf(source), functions, ranges });
  }

  const located: Located[] = [];
  let generatedSteps = 0;
  for (const step of record.steps) {
    const where = sideOf(root, step.url);
    const script = scripts.get(step.scriptId);
    if (where === undefined || script === undefined) continue;
    const offset = (script.starts[step.line] ?? 0) + step.column;
    const tsLine = tsLineOf(script, step.line, step.column);
    // esbuild's helpers (`__name`, called where a named closure is made) are no source line: left
    // out. They run only from their own file, so no entry or crossing changes.
    if (tsLine === undefined) generatedSteps += 1;
    else located.push({ ...step, ...where, offset, tsLine, fn: innermost(script.functions, offset) });
  }

  const segments: Segment[] = [];
  for (const step of located) {
    const last = segments.at(-1);
    if (last !== undefined && last.file === step.file) last.steps.push(step);
    else segments.push({ side: step.side, file: step.file, steps: [step] });
  }

  const coreFiles = new Map<string, FileRow>();
  for (const segment of segments) {
    if (segment.side !== "core") continue;
    const row = coreFiles.get(segment.file) ?? { entries: 0, steps: 0, calls: 0 };
    row.entries += 1;
    row.steps += segment.steps.length;
    coreFiles.set(segment.file, row);
  }
  // A script's top level (offset 0) ran before the window: its count is the module's, not a call's.
  // tsx's generated helpers (no source line) are left out here too.
  const isGenerated = (fn: CoveredFunction) => {
    const script = scripts.get(fn.scriptId);
    if (script === undefined) return false;
    const line = lineOf(script.starts, fn.startOffset);
    return tsLineOf(script, line, fn.startOffset - (script.starts[line] ?? 0)) === undefined;
  };
  const functionsRan = record.coverage.filter((fn) => fn.count > 0 && fn.startOffset > 0 && !isGenerated(fn));
  for (const fn of functionsRan) {
    const where = sideOf(root, fn.url);
    const row = where === undefined ? undefined : coreFiles.get(where.file);
    if (row !== undefined) row.calls += fn.count;
  }

  let adapterToCore = 0;
  let coreToAdapter = 0;
  for (let index = 1; index < segments.length; index++) {
    const before = segments[index - 1]?.side;
    const after = segments[index]?.side;
    if (before === "adapter" && after === "core") adapterToCore += 1;
    if (before === "core" && after === "adapter") coreToAdapter += 1;
  }

  const seenFunctions = new Set(located.map((step) => step.fn));
  const functionsMissed = functionsRan.filter((fn) => !seenFunctions.has(fn));

  // Every place V8 can pause in code that ran should have been a step, unless stepping lost the
  // call somewhere (an async continuation it did not follow): the stronger of the two checks.
  const paused = new Set(located.map((step) => `${step.scriptId}:${step.offset}`));
  let locationsRan = 0;
  const locationsMissed: string[] = [];
  for (const [scriptId, locations] of Object.entries(record.breakLocations)) {
    const script = scripts.get(scriptId);
    const url = record.sources[scriptId]?.url ?? "";
    if (script === undefined) continue;
    for (const { line, column } of locations) {
      const offset = (script.starts[line] ?? 0) + column;
      const range = innermost(script.ranges, offset);
      if (range === undefined || range.count === 0 || innermost(script.functions, offset)?.startOffset === 0) continue;
      const tsLine = tsLineOf(script, line, column);
      if (tsLine === undefined) continue;
      locationsRan += 1;
      if (!paused.has(`${scriptId}:${offset}`)) locationsMissed.push(`${sideOf(root, url)?.file ?? url}:${tsLine}`);
    }
  }

  return {
    located,
    generatedSteps,
    segments,
    coreFiles,
    adapterToCore,
    coreToAdapter,
    crossings: adapterToCore + coreToAdapter,
    functionsRan,
    functionsMissed,
    locationsRan,
    locationsMissed,
  };
}

/** `file name:line ×count`, for a function of the coverage. */
export function describeFunction(root: string, fn: CoveredFunction, record: WalkRecord): string {
  const source = record.sources[fn.scriptId]?.source ?? "";
  const starts = lineStarts(source);
  const line = lineOf(starts, fn.startOffset);
  const entry = sourceMapOf(source)?.findEntry(line, fn.startOffset - (starts[line] ?? 0)) as { originalLine?: number } | undefined;
  return `${sideOf(root, fn.url)?.file ?? fn.url} ${fn.functionName || "(anonymous)"}:${(entry?.originalLine ?? line) + 1} ×${fn.count}`;
}

export const nameOf = (step: Located) => step.functionName || step.fn?.functionName || "(anonymous)";

/** The functions a segment ran in, in order, each once: `name:line` (TypeScript line of its first step). */
export function functionsOf(segment: Segment): string {
  const seen = new Map<string, number>();
  for (const step of segment.steps) {
    const name = nameOf(step);
    if (!seen.has(name)) seen.set(name, step.tsLine);
  }
  return [...seen].map(([name, line]) => `${name}:${line}`).join(", ");
}
