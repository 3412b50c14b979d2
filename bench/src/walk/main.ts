// `npm run walk` (in bench/): which files of packages/core/src one LangChain tool call walks
// through, how often it enters each, and how often control crosses between the adapter and the
// core (issue 21's goal: one failing call, bad arguments → reflection text, enters each core file
// at most twice and crosses the adapter/core boundary at most twice).
//
// How: the scenario (scenario.ts: a real createAgent, a fake model, retryReflectMiddleware(), a
// zod tool) runs in this thread on the TypeScript sources (aliases.ts; tsx compiles them); a worker
// (driver.ts) drives this thread's V8 debugger and `Debugger.stepInto`s from the middleware's
// entry to its returned ToolMessage, node_modules and node: internals blackboxed. The walk is the
// sequence of the top frame's files over the steps in packages/core/src and
// packages/langchain-adapter/src, consecutive repeats collapsed (analyse.ts). V8 precise coverage
// of the same window checks that the stepper paused in every core/adapter function that ran, and
// at every place it could pause in the code that ran.
//
//   npm run walk                        # every scenario (failing, healthy, transient), on the working tree
//   npm run walk -- --scenario=failing  # or healthy, transient; both: failing and healthy
//   npm run walk -- --at=HEAD           # the sources of a commit (exported to .cache/walk/<sha>/), not the working tree
//   --steps prints every step; --cold skips the untraced warm-up run of each scenario
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { register } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { ToolMessage } from "@langchain/core/messages";
import { analyse, describeFunction, functionsOf, nameOf } from "./analyse.js";
import type { ScenarioName } from "./scenario.js";
import type { DriverReply, DriverRequest, WalkMethod, WalkRecord } from "./walk-types.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const MAX_STEPS = 200_000;
/** Issue 21's goal. */
const MAX_ENTRIES_PER_CORE_FILE = 2;
const MAX_CROSSINGS = 2;

const args = process.argv.slice(2);
const option = (name: string) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const flag = (name: string) => args.includes(`--${name}`);
const scenarioArg = option("scenario") ?? "all";
if (!["all", "both", "failing", "healthy", "transient"].includes(scenarioArg))
  throw new Error(`--scenario: failing, healthy, transient, both or all (got ${scenarioArg})`);
const scenarios: ScenarioName[] =
  scenarioArg === "all"
    ? ["failing", "healthy", "transient"]
    : scenarioArg === "both"
      ? ["failing", "healthy"]
      : [scenarioArg as ScenarioName];
/** Issue 52's goal: a reflected call and a 503-then-success call each run functions in at most this many core files. */
const MAX_CORE_FILES = 15;
const method = (option("method") ?? "breakpoints") as WalkMethod;
if (method !== "breakpoints" && method !== "step") throw new Error(`--method: breakpoints or step (got ${method})`);

/** The sources of `rev` (packages/core/src and packages/langchain-adapter/src), exported once with `git archive`. */
function snapshot(rev: string): { dir: string; label: string } {
  const git = (...argv: string[]) => execFileSync("git", argv, { cwd: REPO, encoding: "utf8" }).trim();
  const sha = git("rev-parse", "--verify", `${rev}^{commit}`);
  const dir = join(REPO, ".cache", "walk", sha);
  if (!existsSync(join(dir, "packages"))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const tar = join(dir, "sources.tar");
    git("archive", "--format=tar", "-o", tar, sha, "packages/core/src", "packages/langchain-adapter/src");
    execFileSync("tar", ["-xf", tar, "-C", dir]);
    rmSync(tar);
    // The adapter's imports (langchain, @langchain/*, zod) resolve as from the repository's copy.
    symlinkSync(join(REPO, "packages/langchain-adapter/node_modules"), join(dir, "packages/langchain-adapter/node_modules"));
  }
  return { dir, label: `${rev} (${sha.slice(0, 7)}: ${git("log", "-1", "--format=%s", sha).slice(0, 80)})` };
}

const at = option("at");
const sources = at === undefined ? { dir: REPO, label: "the working tree (uncommitted edits included)" } : snapshot(at);
const ROOT = pathToFileURL(sources.dir).href.replace(/\/?$/, "/");

// --- The driver -------------------------------------------------------------------------------

// Node 20 does not run a worker's TypeScript entry through `--import tsx`: the worker loads it with tsx's API.
const driverUrl = new URL("./driver.ts", import.meta.url).href;
const driverEntry = `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then(({ tsImport }) => tsImport(${JSON.stringify(driverUrl)}, ${JSON.stringify(import.meta.url)}));`;
const sourceDirs = [`${ROOT}packages/core/src/`, `${ROOT}packages/langchain-adapter/src/`];
const worker = new Worker(driverEntry, { eval: true, workerData: { sourceDirs, maxSteps: MAX_STEPS, method } });
const replies: DriverReply[] = [];
let waiting: ((reply: DriverReply) => void) | undefined;
worker.on("message", (reply: DriverReply) => {
  const resolve = waiting;
  waiting = undefined;
  if (resolve !== undefined) resolve(reply);
  else replies.push(reply);
});
worker.on("error", (error) => {
  console.error("walk: the driver failed:", error);
  process.exit(1);
});
function nextReply(): Promise<DriverReply> {
  const queued = replies.shift();
  if (queued !== undefined) return Promise.resolve(queued);
  return new Promise((resolve) => {
    waiting = resolve;
  });
}
async function expectReply<T extends DriverReply["type"]>(type: T): Promise<Extract<DriverReply, { type: T }>> {
  const reply = await nextReply();
  if (reply.type === "error") throw new Error(`walk: the driver failed: ${reply.message}`);
  if (reply.type !== type) throw new Error(`walk: expected "${type}" from the driver, got "${reply.type}"`);
  return reply as Extract<DriverReply, { type: T }>;
}
const send = (request: DriverRequest) => worker.postMessage(request);

// The scenario (and with it the core and the adapter) loads once the driver covers it.
await expectReply("ready");
register("./aliases.ts", { parentURL: import.meta.url, data: { root: ROOT } });
const { runScenario, SCENARIOS } = await import("./scenario.js");

// --- Report -----------------------------------------------------------------------------------

function report(name: ScenarioName, message: ToolMessage, record: WalkRecord): void {
  const walk = analyse(ROOT, record);
  const text = String(message.content).replace(/\s+/g, " ");
  console.log(`\n=== ${name}: ${SCENARIOS[name].what}`);
  console.log(`ToolMessage: status ${message.status ?? "success"}, "${text.length > 110 ? `${text.slice(0, 110)}…` : text}"`);
  console.log(
    `${record.steps.length} pauses between walkStart and walkEnd, ${walk.located.length} of them steps in core/adapter sources` +
      `${walk.generatedSteps > 0 ? ` (${walk.generatedSteps} more in tsx's generated helpers, left out)` : ""}` +
      `${record.truncated ? ` (TRUNCATED at ${MAX_STEPS} steps)` : ""}`,
  );
  if (record.lateScripts.length > 0)
    console.log(`WARNING: loaded inside the window, steps may be missing: ${record.lateScripts.join(", ")}`);
  if (flag("steps")) {
    for (const step of walk.located)
      console.log(`  ${step.side.padEnd(7)} ${step.file}:${step.tsLine} ${nameOf(step)} (depth ${step.depth})`);
  }
  console.log("\nWalk (files of the steps, consecutive repeats collapsed; functions as name:TS line):");
  walk.segments.forEach((segment, index) => {
    console.log(`  ${String(index + 1).padStart(3)}. ${segment.side.padEnd(7)} ${segment.file.padEnd(44)} ${functionsOf(segment)}`);
  });
  console.log(`\nCore files entered (${walk.coreFiles.size}):`);
  console.log(`  ${"file".padEnd(44)} entries  steps  calls*`);
  const rows = [...walk.coreFiles].sort(([fileA, a], [fileB, b]) => b.entries - a.entries || fileA.localeCompare(fileB));
  for (const [file, row] of rows) {
    const over = row.entries > MAX_ENTRIES_PER_CORE_FILE ? `  > ${MAX_ENTRIES_PER_CORE_FILE}` : "";
    console.log(
      `  ${file.padEnd(44)} ${String(row.entries).padStart(7)} ${String(row.steps).padStart(6)} ${String(row.calls).padStart(7)}${over}`,
    );
  }
  console.log(
    "  * calls of the file's functions in the window (V8 precise coverage); a call from the same file is no entry, a return into it is one",
  );
  console.log(
    `\nBoundary crossings (adapter <-> core): ${walk.crossings} (adapter→core ${walk.adapterToCore}, core→adapter ${walk.coreToAdapter})`,
  );
  // Where the adapter→core entries come from: the adapter file, the core file and the function entered.
  const places = new Map<string, number>();
  walk.segments.forEach((segment, index) => {
    const before = walk.segments[index - 1];
    if (before?.side !== "adapter" || segment.side !== "core") return;
    const first = segment.steps[0];
    const place = `${before.file} → ${segment.file} ${first === undefined ? "" : nameOf(first)}`;
    places.set(place, (places.get(place) ?? 0) + 1);
  });
  for (const [place, count] of [...places].sort(([a, countA], [b, countB]) => countB - countA || a.localeCompare(b))) {
    console.log(`  ${String(count).padStart(3)} × ${place}`);
  }
  const { functionsRan, functionsMissed, locationsRan, locationsMissed } = walk;
  console.log(
    `Cross-check (coverage): ${functionsRan.length} core/adapter functions ran in the window, the stepper paused in ${functionsRan.length - functionsMissed.length}` +
      (functionsMissed.length === 0 ? "" : ` (not in: ${functionsMissed.map((fn) => describeFunction(ROOT, fn, record)).join("; ")})`) +
      `; of the ${locationsRan} pause locations in code that ran by block coverage, ${locationsRan - locationsMissed.length} were steps` +
      " (block coverage counts the rest of a block after an early return as run: an upper bound)",
  );
  if (flag("steps") && locationsMissed.length > 0) console.log(`  not steps: ${locationsMissed.join(", ")}`);
  const overFiles = rows.filter(([, row]) => row.entries > MAX_ENTRIES_PER_CORE_FILE);
  const reasons = [
    ...(overFiles.length > 0
      ? [`${overFiles.length} of ${rows.length} core files entered more than ${MAX_ENTRIES_PER_CORE_FILE} times`]
      : []),
    ...(walk.crossings > MAX_CROSSINGS ? [`${walk.crossings} crossings`] : []),
    ...(record.truncated || functionsMissed.length > 0 || record.lateScripts.length > 0 ? ["the walk is incomplete"] : []),
  ];
  console.log(
    `Goal (issue 52): ≤ ${MAX_CORE_FILES} core files in one call: ${rows.length <= MAX_CORE_FILES ? "met" : "MISSED"} (${rows.length})` +
      (name === "healthy" ? " (for comparison: the goal names the reflected and the 503-then-success call)" : ""),
  );
  const goal = name === "failing" ? "Goal (issue 21)" : "Goal (for comparison; issue 21 is about the failing call)";
  console.log(
    `${goal}: ≤ ${MAX_ENTRIES_PER_CORE_FILE} entries per core file and ≤ ${MAX_CROSSINGS} crossings: ` +
      `${reasons.length === 0 ? "PASS" : "MISS"}${reasons.length > 0 ? ` (${reasons.join("; ")})` : ""}`,
  );
}

// --- Run --------------------------------------------------------------------------------------

console.log(`walk: sources of ${sources.label}; method ${method}; Node ${process.version}`);
if (!flag("cold")) {
  // One untraced run of each first (another agent, another plugin): module-level lazy work is not the call's.
  for (const name of scenarios) await runScenario(name, false);
}
try {
  for (const name of scenarios) {
    send({ type: "arm" });
    await expectReply("armed");
    const message = await runScenario(name, true);
    const { record } = await expectReply("walk");
    report(name, message, record);
  }
  send({ type: "quit" });
  await new Promise((resolve) => worker.once("exit", resolve));
} catch (error) {
  await worker.terminate();
  throw error;
}
