import { createTool } from "@mastra/core/tools";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { tool as openAiTool, RunContext, setTracingDisabled } from "@openai/agents";
import { tool as aiTool, type ToolExecutionOptions } from "ai";
import { type AgentMiddleware, ToolMessage } from "langchain";
import { z } from "zod";
import { formatNs, formatRatio, round } from "../format.js";
import { type Contestant, compare } from "../measure.js";
import { type CoreModule, PENDING } from "../ours.js";
import type { Cell, SuiteResult, TargetResult } from "../report-types.js";
import { hookParts } from "./langchain.js";

/** Each adapter's overhead may be at most this factor of the LangChain adapter's (issue: adapters in the bench). */
const MAX_RATIO = 1.3;
const ROUNDS = 7;

const LC_BARE = "LangChain: handler alone";
const LC_OURS = "LangChain: retryReflectMiddleware wrapToolCall";
const AI_BARE = "AI SDK: bare tool.execute";
const AI_OURS = "AI SDK: withRetryReflect(tools).execute";
const AI_OURS_NO_LIMIT = "AI SDK: withRetryReflect(tools), attemptTimeoutMs: 0 (no limit)";
const OA_BARE = "OpenAI Agents: tool(definition).invoke";
const OA_OURS = "OpenAI Agents: withRetryReflect([definition]).invoke";
const MA_BARE = "Mastra: createTool(...).execute";
const MA_OURS = "Mastra: withRetryReflect({ tool }).execute";
const MCP_STUB_BARE = "MCP: ready-result callTool alone";
const MCP_STUB_OURS = "MCP: withRetryReflect(ready-result client).callTool";
const MCP_BARE = "MCP: client.callTool (in-memory transport)";
const MCP_OURS = "MCP: withRetryReflect(client).callTool (in-memory transport)";

type AiSdkAdapter = typeof import("@retry-reflect/ai-sdk");
type McpAdapter = typeof import("@retry-reflect/mcp");
type McpClientLike = import("@retry-reflect/mcp").McpClientLike;
type LangChainAdapter = typeof import("@retry-reflect/langchain");
type OpenAiAgentsAdapter = typeof import("@retry-reflect/openai-agents");
type MastraAdapter = typeof import("@retry-reflect/mastra");

interface Adapters {
  readonly langchain: LangChainAdapter;
  readonly aiSdk: AiSdkAdapter;
  readonly mcp: McpAdapter;
  readonly openAiAgents: OpenAiAgentsAdapter;
  readonly mastra: MastraAdapter;
}

/** The three adapters, once the core and they have been built; undefined while any is missing. */
async function loadAdapters(): Promise<Adapters | undefined> {
  try {
    const [langchain, aiSdk, mcp, openAiAgents, mastra] = await Promise.all([
      import("@retry-reflect/langchain"),
      import("@retry-reflect/ai-sdk"),
      import("@retry-reflect/mcp"),
      import("@retry-reflect/openai-agents"),
      import("@retry-reflect/mastra"),
    ]);
    if (
      typeof langchain.retryReflectMiddleware !== "function" ||
      typeof aiSdk.withRetryReflect !== "function" ||
      typeof mcp.withRetryReflect !== "function" ||
      typeof openAiAgents.withRetryReflect !== "function" ||
      typeof mastra.withRetryReflect !== "function"
    )
      return undefined;
    return { langchain, aiSdk, mcp, openAiAgents, mastra };
  } catch {
    return undefined;
  }
}

/** The LangChain hook as suite 7 measures it (`hookParts`): `wrapToolCall` called directly, the handler returning a ready ToolMessage. */
function langchainContestants(middleware: AgentMiddleware): Contestant[] {
  const { handler, call } = hookParts(middleware);
  return [
    [LC_BARE, handler],
    [LC_OURS, call],
  ];
}

/** The AI SDK: one tool's `execute`, bare and wrapped, with the execution options `generateText` passes it. */
function aiSdkContestants(adapter: AiSdkAdapter, core: CoreModule): Contestant[] {
  const tools = {
    noop: aiTool({ description: "Does nothing.", inputSchema: z.object({}), execute: async () => "ok" }),
  };
  const wrapped = adapter.withRetryReflect(tools, core.RetryReflectPlugin.create({}));
  const wrappedNoLimit = adapter.withRetryReflect(tools, core.RetryReflectPlugin.create({ attemptTimeoutMs: 0 }));
  const bare = tools.noop.execute;
  const ours = wrapped.noop.execute;
  const oursNoLimit = wrappedNoLimit.noop.execute;
  if (bare === undefined || ours === undefined || oursNoLimit === undefined || ours === bare || oursNoLimit === bare)
    throw new Error("AI SDK: the tool was not wrapped");
  const input = {};
  const messages: ToolExecutionOptions["messages"] = [];
  // Made per call, as `generateText` makes them per tool call.
  const options = (): ToolExecutionOptions => ({ toolCallId: "call_1", messages, abortSignal: undefined, experimental_context: undefined });
  return [
    [AI_BARE, () => bare(input, options())],
    [AI_OURS, () => ours(input, options())],
    [AI_OURS_NO_LIMIT, () => oursNoLimit(input, options())],
  ];
}

/** The OpenAI Agents SDK: one function tool's `invoke` (what the runner calls), built by `tool()` bare and by `withRetryReflect`. */
function openAiAgentsContestants(adapter: OpenAiAgentsAdapter, core: CoreModule): Contestant[] {
  setTracingDisabled(true);
  const definition = { name: "noop", description: "Does nothing.", parameters: z.object({}), execute: async () => "ok" };
  const bare = openAiTool(definition);
  const [ours] = adapter.withRetryReflect([definition], core.RetryReflectPlugin.create({}));
  if (ours === undefined) throw new Error("OpenAI Agents: the tool was not wrapped");
  const runContext = new RunContext({});
  // Made per call, as the runner makes them per tool call.
  const details = () => ({ toolCall: { type: "function_call" as const, callId: "call_1", name: "noop", arguments: "{}" } });
  return [
    [OA_BARE, () => bare.invoke(runContext, "{}", details())],
    [OA_OURS, () => ours.invoke(runContext, "{}", details())],
  ];
}

/** Mastra: one `createTool` tool's `execute` (what an agent's tool step calls), with the context an agent run gives it, bare and wrapped. */
function mastraContestants(adapter: MastraAdapter, core: CoreModule): Contestant[] {
  const bare = createTool({ id: "noop", description: "Does nothing.", inputSchema: z.object({}), execute: async () => "ok" });
  const { noop: ours } = adapter.withRetryReflect({ noop: bare }, core.RetryReflectPlugin.create({}));
  const execute = bare.execute;
  const wrapped = ours.execute;
  if (execute === undefined || wrapped === undefined || wrapped === execute) throw new Error("Mastra: the tool was not wrapped");
  const input = {};
  type Context = Parameters<typeof execute>[1];
  const messages: unknown[] = [];
  // Made per call, as an agent's tool step makes it per tool call.
  const context = () => ({ runId: "run-1", agent: { agentId: "a", toolCallId: "call_1", messages } }) as unknown as Context;
  return [
    [MA_BARE, () => execute(input, context())],
    [MA_OURS, () => wrapped(input, context())],
  ];
}

interface McpSetup {
  readonly contestants: Contestant[];
  readonly listToolsCalls: () => number;
  readonly close: () => Promise<void>;
}

/** MCP: an in-process `McpServer` with one no-op tool and a `Client`, linked by `InMemoryTransport`. */
async function mcpSetup(adapter: McpAdapter, core: CoreModule): Promise<McpSetup> {
  const server = new McpServer({ name: "bench-server", version: "1.0.0" });
  server.registerTool("noop", { description: "Does nothing.", annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: "text", text: "ok" }],
  }));
  const client = new Client({ name: "bench-client", version: "1.0.0" });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  // Counts `tools/list` requests (of both clients): each wrapper's annotations lookup must happen before measuring, and once.
  let listed = 0;
  const listTools = client.listTools.bind(client);
  client.listTools = (...args: Parameters<Client["listTools"]>) => {
    listed += 1;
    return listTools(...args);
  };
  const wrapped = adapter.withRetryReflect(client, core.RetryReflectPlugin.create({}));
  // Made per call, as a caller makes them per request.
  const params = () => ({ name: "noop", arguments: {} });
  // The adapter alone, as the LangChain hook is measured: a client whose callTool returns a ready result (and
  // whose listTools lists the same annotated tool), so that its overhead is not lost in the transport's noise.
  const ready = { content: [{ type: "text" as const, text: "ok" }] };
  const listing = { tools: [{ name: "noop", inputSchema: { type: "object" as const }, annotations: { readOnlyHint: true } }] };
  const stub: McpClientLike = {
    callTool: (async () => ready) as unknown as Client["callTool"],
    listTools: (async () => {
      listed += 1;
      return listing;
    }) as unknown as Client["listTools"],
  };
  const stubWrapped = adapter.withRetryReflect(stub, core.RetryReflectPlugin.create({}));
  return {
    contestants: [
      [MCP_STUB_BARE, () => stub.callTool(params())],
      [MCP_STUB_OURS, () => stubWrapped.callTool(params())],
      [MCP_BARE, () => client.callTool(params())],
      [MCP_OURS, () => wrapped.callTool(params())],
    ],
    listToolsCalls: () => listed,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

function isOk(name: string, result: unknown): void {
  if (ToolMessage.isInstance(result)) return;
  if (result === "ok") return;
  const content = (result as { content?: Array<{ text?: string }>; isError?: boolean } | undefined)?.content;
  if (content?.[0]?.text === "ok" && (result as { isError?: boolean }).isError !== true) return;
  throw new Error(`${name}: unexpected result ${JSON.stringify(result)}`);
}

/** 9. Adapters: each adapter's per-call overhead over its framework's bare call, against the LangChain adapter's, same rounds. */
export async function adapters(core: CoreModule | undefined): Promise<SuiteResult> {
  const loaded = core === undefined ? undefined : await loadAdapters();
  const method =
    `All thirteen contestants interleaved in the same ${ROUNDS} rounds (mitata, process CPU time, ≥ 120 ms per contestant per round), each contestant's median round reported; ` +
    "overhead = wrapped − bare, per healthy (succeeding) call of a no-op tool, each adapter with a pristine plugin; each host's per-call argument (LangChain's request, the AI SDK's execution options, the OpenAI Agents SDK's call details, Mastra's context, MCP's request params) is made anew for every call, bare and wrapped, as the hosts make them. " +
    "LangChain (the reference): the `wrapToolCall` hook over a handler returning a ready ToolMessage (as suite 7). " +
    "AI SDK: a `tool()` with a no-op async `execute`, called as `generateText` calls it, `execute({}, { toolCallId, messages: [], abortSignal: undefined, experimental_context: undefined })`, bare and from `withRetryReflect(tools, plugin)`; also with `attemptTimeoutMs: 0` (no limit: the tool gets a copy of its options carrying the attempt's context, where the default limit's copy sits behind a lazy-signal proxy), shown, not judged. " +
    'OpenAI Agents: a `tool()` with a no-op async `execute`, its `invoke(runContext, "{}", { toolCall })` as the runner calls it (JSON parsing and zod validation included), bare and from `withRetryReflect([definition], plugin)`. ' +
    "Mastra: a `createTool` tool with a no-op async `execute` (its own input validation included), `execute({}, context)` with an agent run's context (`runId`, `agent.toolCallId`), bare and from `withRetryReflect({ noop }, plugin)` of `@retry-reflect/mastra`. " +
    "MCP, judged: the adapter alone, `withRetryReflect(client, plugin).callTool({ name, arguments: {} })` over a client whose `callTool` returns a ready result, against that `callTool` itself (as the LangChain hook is measured over a ready handler). " +
    "MCP, for scale: the same call on an SDK `Client` linked to an in-process `McpServer` (the no-op tool annotated `readOnlyHint: true`) by `InMemoryTransport.createLinkedPair()`. " +
    "Both MCP wrappers made their annotations lookup (`listTools` on first use) before measuring.";
  const columns = ["framework", "contestant", "ns/call", "p50", "overhead over bare", "overhead / LangChain adapter's"];
  const targetText = `≤ ${MAX_RATIO}× the LangChain adapter's`;
  if (core === undefined || loaded === undefined) {
    return {
      id: "adapters",
      title: "9. Adapters (no-op tool, healthy call)",
      method,
      tables: [
        {
          table: {
            columns,
            rows: [LC_OURS, AI_OURS, OA_OURS, MA_OURS, MCP_STUB_OURS, MCP_OURS].map((contestant) => ({ contestant, "ns/call": PENDING })),
          },
        },
      ],
      targets: [
        { name: "AI SDK adapter overhead", target: targetText, measured: PENDING, met: null },
        { name: "OpenAI Agents adapter overhead", target: targetText, measured: PENDING, met: null },
        { name: "Mastra adapter overhead", target: targetText, measured: PENDING, met: null },
        { name: "MCP adapter overhead", target: targetText, measured: PENDING, met: null },
      ],
      notes: [
        "The core or an adapter (`@retry-reflect/langchain`, `ai-sdk`, `mcp`, `openai-agents`, `mastra`) is not built: run `npm run build` first.",
      ],
      data: {},
    };
  }

  const mcp = await mcpSetup(loaded.mcp, core);
  try {
    const contestants: Contestant[] = [
      ...langchainContestants(loaded.langchain.retryReflectMiddleware(core.RetryReflectPlugin.create({})) as AgentMiddleware),
      ...aiSdkContestants(loaded.aiSdk, core),
      ...openAiAgentsContestants(loaded.openAiAgents, core),
      ...mastraContestants(loaded.mastra, core),
      ...mcp.contestants,
    ];
    // Every contestant once: checks its result, and makes each MCP wrapper fetch its annotations (its first `listTools`).
    for (const [name, call] of contestants) isOk(name, await call());
    const listedBefore = mcp.listToolsCalls();
    if (listedBefore !== 2) throw new Error(`MCP: expected one listTools per wrapper (2) before measuring, saw ${listedBefore}`);

    const timings = await compare(contestants, { rounds: ROUNDS });
    const listedDuring = mcp.listToolsCalls() - listedBefore;
    if (listedDuring !== 0) throw new Error(`MCP: the wrapper listed tools ${listedDuring} times while measured`);

    const byName = new Map(timings.map((timing) => [timing.name, timing]));
    const pair = (bare: string, ours: string) => {
      const b = byName.get(bare)!;
      const o = byName.get(ours)!;
      // Per-round differences, for the spread (rounds are interleaved: round i of both ran side by side).
      const perRound = o.roundAvgNs.map((value, index) => value - b.roundAvgNs[index]!);
      return { bare: b, ours: o, overheadNs: o.avgNs - b.avgNs, perRound };
    };
    type Pair = ReturnType<typeof pair>;
    const lc = pair(LC_BARE, LC_OURS);
    const ai = pair(AI_BARE, AI_OURS);
    const aiNoLimit = pair(AI_BARE, AI_OURS_NO_LIMIT);
    const oa = pair(OA_BARE, OA_OURS);
    const ma = pair(MA_BARE, MA_OURS);
    const mcpAlone = pair(MCP_STUB_BARE, MCP_STUB_OURS);
    const mcpTransport = pair(MCP_BARE, MCP_OURS);

    const rows: Record<string, Cell>[] = [];
    const pairs: ReadonlyArray<readonly [string, Pair]> = [
      ["LangChain", lc],
      ["AI SDK", ai],
      ["AI SDK", aiNoLimit],
      ["OpenAI Agents", oa],
      ["Mastra", ma],
      ["MCP", mcpAlone],
      ["MCP", mcpTransport],
    ];
    for (const [framework, p] of pairs) {
      const ratio =
        p === lc
          ? "1.00× (reference)"
          : p === mcpTransport
            ? "not judged (transport noise)"
            : p === aiNoLimit
              ? `${formatRatio(p.overheadNs / lc.overheadNs)} (not judged: not the default)`
              : formatRatio(p.overheadNs / lc.overheadNs);
      // The bare row once per framework (the no-limit AI SDK row shares the AI SDK's bare tool).
      if (p !== aiNoLimit)
        rows.push({
          framework,
          contestant: p.bare.name,
          "ns/call": formatNs(p.bare.avgNs),
          p50: formatNs(p.bare.p50Ns),
          "overhead over bare": "—",
        });
      rows.push({
        framework,
        contestant: p.ours.name,
        "ns/call": formatNs(p.ours.avgNs),
        p50: formatNs(p.ours.p50Ns),
        "overhead over bare": formatNs(p.overheadNs),
        "overhead / LangChain adapter's": ratio,
      });
    }

    const target = (name: string, p: Pair): TargetResult => {
      const ratio = p.overheadNs / lc.overheadNs;
      return {
        name,
        target: targetText,
        measured: `${formatNs(p.overheadNs)} vs LangChain ${formatNs(lc.overheadNs)} per call (${formatRatio(ratio)})`,
        met: ratio <= MAX_RATIO,
      };
    };
    const spread = (p: Pair) => `${formatNs(Math.min(...p.perRound))} … ${formatNs(Math.max(...p.perRound))}`;

    return {
      id: "adapters",
      title: "9. Adapters (no-op tool, healthy call)",
      method,
      tables: [{ table: { columns, rows } }],
      targets: [
        target("AI SDK adapter overhead", ai),
        target("OpenAI Agents adapter overhead", oa),
        target("Mastra adapter overhead", ma),
        target("MCP adapter overhead (adapter alone)", mcpAlone),
      ],
      notes: [
        `Overhead in each of the ${ROUNDS} rounds (wrapped round i − bare round i): LangChain ${spread(lc)}; AI SDK ${spread(ai)}; OpenAI Agents ${spread(oa)}; Mastra ${spread(ma)}; MCP alone ${spread(mcpAlone)}; MCP over the in-memory transport ${spread(mcpTransport)}.`,
        `Over the in-memory transport one \`callTool\` costs ${formatNs(mcpTransport.bare.avgNs)} of CPU (both sides of the protocol in one process: JSON-RPC, zod validation of request and result); ` +
          `the adapter's overhead there (${formatNs(mcpTransport.overheadNs)}) is the difference of two such figures and moves by more than the whole LangChain overhead from round to round on a shared machine, ` +
          "so it is shown for scale and the target is judged on the adapter alone.",
        "Each MCP wrapper listed the tools once, before measuring (its annotations lookup; counted on the SDK client), and not while measured.",
      ],
      data: Object.fromEntries(
        (
          [
            ["langchain", lc],
            ["aiSdk", ai],
            ["openAiAgents", oa],
            ["mastra", ma],
            ["mcpAlone", mcpAlone],
            ["mcpInMemoryTransport", mcpTransport],
          ] as const
        ).map(([key, p]) => [
          key,
          {
            bare: p.bare,
            ours: p.ours,
            overheadNs: round(p.overheadNs),
            roundOverheadNs: p.perRound.map((value) => round(value)),
            ratioToLangChain: round(p.overheadNs / lc.overheadNs, 3),
          },
        ]),
      ),
    };
  } finally {
    await mcp.close();
  }
}
