import { tool } from "@langchain/core/tools";
import { type AgentMiddleware, createAgent, FakeToolCallingModel, HumanMessage, ToolMessage, toolRetryMiddleware } from "langchain";
import { z } from "zod";
import { leastHook } from "../contract-floor.js";
import { formatNs, formatRatio, round } from "../format.js";
import { type Contestant, compare } from "../measure.js";
import { type CoreModule, PENDING } from "../ours.js";
import type { Cell, SuiteResult, TargetResult } from "../report-types.js";

const NONE = "no middleware";
const LANGCHAIN = "toolRetryMiddleware()";
const OURS = "retryReflectMiddleware(plugin)";
const OURS_AFTER_FAILURE = "retryReflectMiddleware after one unrelated failure";
const OURS_NO_LIMIT = "retryReflectMiddleware(plugin), attemptTimeoutMs: 0 (no limit; not judged)";
const CONTRACT_LEAST = "the contract's least, hand-written (a reference, not a library; not judged)";
/** After an unrelated tool failed once, the hook's overhead may grow by at most this factor. */
const AFTER_FAILURE_MAX_RATIO = 1.3;
/** The hook's overhead may be at most this factor of the contract's least, hand-written (issue 52). */
const HOOK_MAX_OF_LEAST = 2;
const TOOL_CALLS_PER_TURN = [1, 10] as const;

type MiddlewareFactory = (plugin: unknown) => AgentMiddleware;

/** Loads our adapter's middleware factory if it has landed. */
async function loadOurMiddleware(): Promise<MiddlewareFactory | undefined> {
  try {
    const adapter = (await import("@retry-reflect/langchain")) as { retryReflectMiddleware?: unknown };
    return typeof adapter.retryReflectMiddleware === "function" ? (adapter.retryReflectMiddleware as MiddlewareFactory) : undefined;
  } catch {
    return undefined;
  }
}

const noopTool = () => tool(async () => "ok", { name: "noop", description: "Does nothing.", schema: z.object({}) });

type WrapToolCall = (request: unknown, handler: (request: unknown) => Promise<unknown>) => Promise<unknown>;

/**
 * The middleware's `wrapToolCall` hook called directly, as the agent's tool node calls it, with a
 * handler that returns a ready ToolMessage: the hook's own cost, without the graph's noise.
 */
function hookCall(middleware: AgentMiddleware): () => Promise<unknown> {
  return hookParts(middleware).call;
}

/**
 * The handler alone (the bare tool call) and the hook over it: what suites 7 and 9 time. Each call
 * gets a request of its own, as `createAgent`'s tool node makes one per tool call (the tool, the
 * state and the runtime shared), the bare handler too.
 */
export function hookParts(middleware: AgentMiddleware): {
  readonly handler: () => Promise<unknown>;
  readonly call: () => Promise<unknown>;
} {
  const wrap = (middleware as { wrapToolCall?: WrapToolCall }).wrapToolCall;
  if (wrap === undefined) throw new Error(`${middleware.name} has no wrapToolCall`);
  const noop = noopTool();
  const message = new ToolMessage({ content: "ok", tool_call_id: "call_1", name: "noop" });
  const handler = async (_request: unknown) => message;
  const state = { messages: [] };
  const runtime = { context: {}, configurable: { thread_id: "thread-1" }, signal: undefined };
  const request = () => ({ toolCall: { id: "call_1", name: "noop", args: {} }, tool: noop, state, runtime });
  return { handler: () => handler(request()), call: () => wrap(request(), handler) };
}

function agentWith(middleware: readonly AgentMiddleware[], toolCalls: number) {
  const noop = noopTool();
  // Turn 1: the model asks for `toolCalls` no-op calls; turn 2: it answers. The index resets on every new run.
  const model = new FakeToolCallingModel({
    toolCalls: [Array.from({ length: toolCalls }, (_, index) => ({ name: "noop", args: {}, id: `call_${index}` })), []],
  });
  return createAgent({ model, tools: [noop], middleware: [...middleware] });
}

/** 7. LangChain: one agent run (model → tools → model) with no middleware, LangChain's retry, ours. */
export async function langchain(core: CoreModule | undefined): Promise<SuiteResult> {
  const ourFactory = core === undefined ? undefined : await loadOurMiddleware();
  const rows: Record<string, Cell>[] = [];
  const data: Record<string, unknown> = {};
  const targets: TargetResult[] = [];
  const input = { messages: [new HumanMessage("go")] };

  // The hook alone; the floor is the handler over a request of its own per call, as the hooks get one.
  const theirs = hookParts(toolRetryMiddleware());
  const hookContestants: Contestant[] = [
    ["handler alone (floor)", theirs.handler],
    [LANGCHAIN, theirs.call],
    [CONTRACT_LEAST, hookCall({ name: "ContractLeast", wrapToolCall: leastHook() } as unknown as AgentMiddleware)],
  ];
  const notes: string[] = [
    `"${CONTRACT_LEAST}": what the contract asks of a healthy read tool's call under the default time limit, and nothing else, as one function (bench/src/contract-floor.ts): ` +
      "the effect from the tool's metadata, the healthy predicate, the caller's abort, the attempt joined to and left from a watch list with a promise the tool or the limit settles, the error-ToolMessage check and the breaker's reset. " +
      "It shows what the goal leaves for everything else: our plugin's options, observers, scopes, the adapter seam and the shared core path.",
  ];
  if (ourFactory !== undefined && core !== undefined) {
    hookContestants.push([OURS, hookCall(ourFactory(core.RetryReflectPlugin.create({})))]);
    // A plugin in which another tool failed once (another scope) before the hook is measured on `noop`.
    const plugin = core.RetryReflectPlugin.create({});
    const unrelated = await plugin.execute({ toolName: "other_tool", args: {}, scope: "elsewhere" }, () => {
      throw new Error("Invalid input");
    });
    if (unrelated.status === "success") throw new Error("the unrelated failure did not fail");
    hookContestants.push([OURS_AFTER_FAILURE, hookCall(ourFactory(plugin))]);
    hookContestants.push([OURS_NO_LIMIT, hookCall(ourFactory(core.RetryReflectPlugin.create({ attemptTimeoutMs: 0 })))]);
    notes.push(
      `"${OURS_NO_LIMIT}": our default limits each attempt to 60 s; toolRetryMiddleware has no time limit. This row is the plugin without one, like for like with it; the target is judged on the default, as before.`,
    );
    notes.push(
      `"${OURS_AFTER_FAILURE}": the plugin had \`other_tool\` fail once first (a plain \`new Error("Invalid input")\`, scope "elsewhere"; outcome \`${unrelated.status}\`, ` +
        `${plugin.circuits.size} circuit-breaker entr${plugin.circuits.size === 1 ? "y" : "ies"} left), then the hook is measured on the \`noop\` tool like the pristine row.`,
    );
  }
  for (const [name, call] of hookContestants) {
    const result = await call();
    if (!ToolMessage.isInstance(result)) throw new Error(`${name}: the hook did not return the handler's ToolMessage`);
  }
  const hookTimings = await compare(hookContestants);
  const hookFloor = hookTimings[0]!.avgNs;
  const hookTheirs = hookTimings.find((timing) => timing.name === LANGCHAIN)!;
  const hookOurs = hookTimings.find((timing) => timing.name === OURS);
  const hookLeast = hookTimings.find((timing) => timing.name === CONTRACT_LEAST)!;
  const hookRows: Record<string, Cell>[] = hookTimings.map((timing, index) => ({
    middleware: timing.name,
    "ns/call": formatNs(timing.avgNs),
    "overhead over floor": index === 0 ? "—" : formatNs(timing.avgNs - hookFloor),
    "ours / this (overhead)":
      hookOurs === undefined ? PENDING : index === 0 ? "—" : formatRatio((hookOurs.avgNs - hookFloor) / (timing.avgNs - hookFloor)),
  }));
  if (hookOurs === undefined)
    hookRows.push(
      { middleware: OURS, "ns/call": PENDING },
      { middleware: OURS_AFTER_FAILURE, "ns/call": PENDING },
      { middleware: OURS_NO_LIMIT, "ns/call": PENDING },
    );
  data.hook = hookTimings.map((timing) => ({ ...timing, overheadNs: round(timing.avgNs - hookFloor) }));
  targets.push({
    name: "middleware overhead (wrapToolCall hook)",
    target: `≤ ${HOOK_MAX_OF_LEAST}× the contract's least (hand-written)`,
    measured:
      hookOurs === undefined
        ? `${PENDING}: @retry-reflect/langchain has no retryReflectMiddleware yet`
        : `ours ${formatNs(hookOurs.avgNs - hookFloor)} (${formatRatio((hookOurs.avgNs - hookFloor) / (hookLeast.avgNs - hookFloor))} the contract's least) vs toolRetryMiddleware ${formatNs(hookTheirs.avgNs - hookFloor)} per tool call (${formatRatio((hookOurs.avgNs - hookFloor) / (hookTheirs.avgNs - hookFloor))}); ` +
          `the contract's least, hand-written: ${formatNs(hookLeast.avgNs - hookFloor)} (${formatRatio((hookLeast.avgNs - hookFloor) / (hookTheirs.avgNs - hookFloor))})`,
    met: hookOurs === undefined ? null : hookOurs.avgNs - hookFloor <= HOOK_MAX_OF_LEAST * (hookLeast.avgNs - hookFloor),
  });
  const hookAfterFailure = hookTimings.find((timing) => timing.name === OURS_AFTER_FAILURE);
  const afterFailureTarget = `hook overhead ≤ ${AFTER_FAILURE_MAX_RATIO}× the pristine hook's`;
  if (hookOurs === undefined || hookAfterFailure === undefined) {
    targets.push({ name: "after an unrelated failure (LangChain hook)", target: afterFailureTarget, measured: PENDING, met: null });
  } else {
    const ratio = (hookAfterFailure.avgNs - hookFloor) / (hookOurs.avgNs - hookFloor);
    targets.push({
      name: "after an unrelated failure (LangChain hook)",
      target: afterFailureTarget,
      measured: `${formatNs(hookAfterFailure.avgNs - hookFloor)} vs pristine ${formatNs(hookOurs.avgNs - hookFloor)} per tool call (${formatRatio(ratio)})`,
      met: ratio <= AFTER_FAILURE_MAX_RATIO,
    });
  }

  for (const toolCalls of TOOL_CALLS_PER_TURN) {
    const variants: Array<readonly [string, ReturnType<typeof agentWith>]> = [
      [NONE, agentWith([], toolCalls)],
      [LANGCHAIN, agentWith([toolRetryMiddleware()], toolCalls)],
    ];
    if (ourFactory !== undefined && core !== undefined)
      variants.push([OURS, agentWith([ourFactory(core.RetryReflectPlugin.create({}))], toolCalls)]);

    for (const [name, agent] of variants) {
      const result = await agent.invoke(input);
      const toolMessages = result.messages.filter((message) => message.getType() === "tool");
      if (toolMessages.length !== toolCalls) throw new Error(`${name}: expected ${toolCalls} tool messages, got ${toolMessages.length}`);
    }
    const contestants: Contestant[] = variants.map(([name, agent]) => [name, () => agent.invoke(input)] as const);
    const timings = await compare(contestants, { rounds: 6, minCpuMs: 250 });
    const none = timings.find((timing) => timing.name === NONE)!;
    const ours = timings.find((timing) => timing.name === OURS);
    const perCall = (ns: number) => (ns - none.avgNs) / toolCalls;
    for (const timing of timings) {
      rows.push({
        "tool calls per run": toolCalls,
        middleware: timing.name,
        "per agent run": formatNs(timing.avgNs),
        "overhead per tool call": timing === none ? "—" : formatNs(perCall(timing.avgNs)),
        "ours / this (run)": ours === undefined ? PENDING : formatRatio(ours.avgNs / timing.avgNs),
      });
    }
    if (ours === undefined) rows.push({ "tool calls per run": toolCalls, middleware: OURS, "per agent run": PENDING });
    data[`toolCalls${toolCalls}`] = timings.map((timing) => ({ ...timing, overheadPerToolCallNs: round(perCall(timing.avgNs)) }));
  }

  return {
    id: "langchain",
    title: "7. LangChain createAgent (fake model, no-op tool)",
    method:
      "Hook: each middleware's wrapToolCall called directly with a LangChain-shaped request (a new one per call, as the tool node makes them; the floor's handler gets one too) and a handler that returns a ready ToolMessage " +
      "(process CPU time, 5 interleaved rounds, each contestant's median round reported). Agent: createAgent with LangChain's FakeToolCallingModel: the first model turn asks for N no-op tool calls, " +
      "the second answers; one measured call = one agent.invoke (process CPU time); overhead per tool call = (run − no-middleware run) / N; 6 interleaved rounds of ≥ 250 ms, median round reported (of an even count: the slower of the two middle rounds). " +
      "Agent runs take milliseconds and vary by more than a middleware costs on a shared machine: the hook table is the precise comparison.",
    notes: [
      ...notes,
      "Whole agent runs are shown for scale, not judged: the middlewares differ by a few microseconds per tool call (the hook table), " +
        "while a 6–9 ms agent run varies by ±5 % from round to round on a shared machine (a negative overhead is that noise).",
    ],
    tables: [
      {
        caption: "The wrapToolCall hook alone (handler returns a ready ToolMessage)",
        table: { columns: ["middleware", "ns/call", "overhead over floor", "ours / this (overhead)"], rows: hookRows },
      },
      {
        caption: "Whole agent runs",
        table: { columns: ["tool calls per run", "middleware", "per agent run", "overhead per tool call", "ours / this (run)"], rows },
      },
    ],
    targets,
    data,
  };
}
