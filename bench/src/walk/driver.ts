// The stepper, in a worker thread: it drives the main thread's V8 debugger through
// `inspector.Session#connectToMainThread()`. Armed by the main thread, it waits for the pause in
// `walkStart` (markers.ts), then records the top frame of every pause until the pause in `walkEnd`:
//   breakpoints (the default): a breakpoint at every place V8 can pause in a core or adapter
//     script (`Debugger.getPossibleBreakpoints`), set at `walkStart`, removed at `walkEnd`; every
//     pause is resumed. Each statement of ours that runs is a step, in the order it runs, async
//     continuations included, whatever code (LangChain's, the tool's) runs in between.
//   step: `Debugger.stepInto` after every pause, node_modules and Node's own (`node:`) scripts
//     blackboxed. V8 follows an async function over its `await`s, and so skips what its caller
//     runs meanwhile: a blind spot the breakpoints method does not have.
// Precise coverage (call counts) of the same window is taken as a cross-check of what was seen.
import { Session } from "node:inspector/promises";
import { parentPort, workerData } from "node:worker_threads";
import type { CoveredFunction, DriverReply, DriverRequest, Step, WalkMethod } from "./walk-types.js";

const { sourceDirs, maxSteps, method } = workerData as { sourceDirs: readonly string[]; maxSteps: number; method: WalkMethod };
const port = parentPort;
if (port === null) throw new Error("driver.ts runs in a worker thread");

const isSource = (url: string) => sourceDirs.some((dir) => url.startsWith(dir));
const reply = (message: DriverReply) => port.postMessage(message);

const session = new Session();
session.connectToMainThread();

let state: "idle" | "armed" | "stepping" = "idle";
let steps: Step[] = [];
let breakpoints: string[] = [];
let lateScripts: string[] = [];

const scriptUrls = new Map<string, string>();
session.on("Debugger.scriptParsed", ({ params }) => {
  scriptUrls.set(params.scriptId, params.url);
  if (state === "stepping" && isSource(params.url)) lateScripts.push(params.url);
});

/** The scripts of the core and the adapter, by id. */
const sourceScripts = () => [...scriptUrls].filter(([, url]) => isSource(url));

/** `breakpoints`: one breakpoint at every place V8 can pause in a core or adapter script. */
async function setBreakpointsEverywhere(): Promise<void> {
  const pending: Promise<{ breakpointId: string }>[] = [];
  for (const [scriptId] of sourceScripts()) {
    const { locations } = await session.post("Debugger.getPossibleBreakpoints", { start: { scriptId, lineNumber: 0, columnNumber: 0 } });
    for (const location of locations) pending.push(session.post("Debugger.setBreakpoint", { location }));
  }
  breakpoints = (await Promise.all(pending)).map((result) => result.breakpointId);
}

async function removeBreakpoints(): Promise<void> {
  await Promise.all(breakpoints.map((breakpointId) => session.post("Debugger.removeBreakpoint", { breakpointId })));
  breakpoints = [];
}

async function coverage(): Promise<CoveredFunction[]> {
  const { result } = await session.post("Profiler.takePreciseCoverage");
  const functions: CoveredFunction[] = [];
  for (const script of result) {
    if (!isSource(script.url)) continue;
    for (const fn of script.functions) {
      const range = fn.ranges[0];
      if (range === undefined) continue;
      functions.push({
        scriptId: script.scriptId,
        url: script.url,
        functionName: fn.functionName,
        startOffset: range.startOffset,
        endOffset: range.endOffset,
        count: range.count,
        blocks: fn.ranges.slice(1),
      });
    }
  }
  return functions;
}

async function finish(truncated: boolean): Promise<void> {
  state = "idle";
  const covered = await coverage();
  await removeBreakpoints();
  const sources: Record<string, { url: string; source: string }> = {};
  const breakLocations: Record<string, { line: number; column: number }[]> = {};
  for (const [scriptId, url] of sourceScripts()) {
    const { scriptSource } = await session.post("Debugger.getScriptSource", { scriptId });
    sources[scriptId] = { url, source: scriptSource };
    const { locations } = await session.post("Debugger.getPossibleBreakpoints", { start: { scriptId, lineNumber: 0, columnNumber: 0 } });
    breakLocations[scriptId] = locations.map((location) => ({ line: location.lineNumber, column: location.columnNumber ?? 0 }));
  }
  reply({ type: "walk", record: { steps, sources, coverage: covered, breakLocations, lateScripts, truncated } });
  steps = [];
  lateScripts = [];
  await session.post("Debugger.resume");
}

session.on("Debugger.paused", ({ params }) => {
  void (async () => {
    const top = params.callFrames[0];
    if (top === undefined || state === "idle") return void (await session.post("Debugger.resume"));
    if (state === "armed") {
      if (top.functionName !== "walkStart") return void (await session.post("Debugger.resume"));
      state = "stepping";
      if (method === "breakpoints") await setBreakpointsEverywhere();
      await coverage(); // resets the counters: the cross-check covers the window only
      return void (await session.post(method === "step" ? "Debugger.stepInto" : "Debugger.resume"));
    }
    if (top.functionName === "walkEnd") return finish(false);
    steps.push({
      scriptId: top.location.scriptId,
      url: scriptUrls.get(top.location.scriptId) ?? top.url,
      line: top.location.lineNumber,
      column: top.location.columnNumber ?? 0,
      functionName: top.functionName,
      depth: params.callFrames.length,
    });
    if (steps.length >= maxSteps) return finish(true);
    await session.post(method === "step" ? "Debugger.stepInto" : "Debugger.resume");
  })().catch((error: unknown) => reply({ type: "error", message: String(error) }));
});

port.on("message", (request: DriverRequest) => {
  void (async () => {
    if (request.type === "quit") {
      await session.post("Profiler.stopPreciseCoverage");
      await session.post("Debugger.disable");
      session.disconnect();
      port.close();
      return;
    }
    steps = [];
    lateScripts = [];
    state = "armed";
    reply({ type: "armed" });
  })().catch((error: unknown) => reply({ type: "error", message: String(error) }));
});

// Before the main thread loads the scenario: block coverage counts only code compiled after this.
await session.post("Debugger.enable");
await session.post("Debugger.setBlackboxPatterns", { patterns: ["/node_modules/", "^node:"] });
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: true });
reply({ type: "ready" });
