// Tools from `@ai-sdk/mcp` (2.0.99) through the AI SDK's own runner: `generateText` of ai 6.0.325,
// and of ai 7.0.173 (`ai-v7`, which needs Node >= 22: skipped on Node 20), with a mock model, the
// tools of `createMCPClient().tools()` connected to real `McpServer`s of `@modelcontextprotocol/sdk`
// (1.32.2) over its in-memory transport. What the model is shown, in six cases: a reflection, a 503
// retried in place, an open circuit (turned away at once, then hidden), a write replayed across two runs
// sharing a store, an approval, and an abort during a backoff.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { InMemoryIdempotencyStore, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import type { ModelMessage, ToolSet } from "ai";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { availableTools, withRetryReflect } from "../src/index.js";
import { callTools, drive, errorText, recordEvents, reply, scriptedModel, toolOutputsSeen, toolsOffered } from "./helpers.js";
import { mcpClientOf } from "./mcp-client.js";

/** What the servers' tools did: one backend, shared by every server made here. */
interface Backend {
  readonly sent: string[];
  /** Calls of `search` so far; it answers "HTTP 503 Service Unavailable" while `searchFailures` is above them. */
  searches: number;
  searchFailures: number;
  /** Calls of `lookup`, which always reports an error the model can fix. */
  lookups: number;
}

function backend(): Backend {
  return { sent: [], searches: 0, searchFailures: 0, lookups: 0 };
}

/** One MCP client (one process, say) connected to its own server over the backend: its `@ai-sdk/mcp` tools. */
async function mcpTools(state: Backend): Promise<ToolSet> {
  const server = new McpServer({ name: "office", version: "1.0.0" });
  server.registerTool(
    "send_email",
    { description: "Send an email", inputSchema: { to: z.string() }, annotations: { destructiveHint: true, readOnlyHint: false } },
    async ({ to }) => {
      state.sent.push(to);
      return { content: [{ type: "text", text: `sent to ${to}` }] };
    },
  );
  server.registerTool(
    "search",
    { description: "Search the docs", inputSchema: { query: z.string() }, annotations: { readOnlyHint: true } },
    async ({ query }) => {
      state.searches += 1;
      if (state.searches <= state.searchFailures)
        return { content: [{ type: "text", text: "HTTP 503 Service Unavailable" }], isError: true };
      return { content: [{ type: "text", text: `found ${query}` }] };
    },
  );
  server.registerTool(
    "lookup",
    { description: "Look up an order by id", inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } },
    async ({ id }) => {
      state.lookups += 1;
      return { content: [{ type: "text", text: `no order with id ${id}: ids look like ORD-1234` }], isError: true };
    },
  );
  const client = await mcpClientOf(server);
  // Typed by @ai-sdk/mcp against the next major's provider utilities; at run time AI SDK 6 tools.
  return (await client.tools()) as unknown as ToolSet;
}

/** The runner of one AI SDK major (its `generateText` and `stepCountIs`; AI SDK 7's typed as 6's). */
type Runner = Pick<typeof import("ai"), "generateText" | "stepCountIs">;

const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
const runners = [
  { name: "ai 6.0.325", load: async (): Promise<Runner> => import("ai"), skip: false },
  {
    name: `ai 7.0.173 (needs Node >= 22; this is Node ${process.versions.node})`,
    load: async () => (await import("ai-v7")) as unknown as Runner,
    skip: NODE_MAJOR < 22,
  },
];

for (const runner of runners)
  describe.skipIf(runner.skip)(`tools from @ai-sdk/mcp, run by generateText of ${runner.name}`, () => {
    let ai: Runner;
    beforeAll(async () => {
      ai = await runner.load(); // imported here, so that Node 20 never loads AI SDK 7
    });

    it("a failure the model can fix reaches it as a reflection (the tool's error text), and its corrected call is made", async () => {
      const clock = createFakeClock();
      const state = backend();
      const tools = withRetryReflect(await mcpTools(state), RetryReflectPlugin.create({ clock }));
      const model = scriptedModel(
        callTools({ name: "lookup", input: { id: "42" }, id: "c1" }),
        callTools({ name: "search", input: { query: "order 42" }, id: "c2" }),
        reply("Order 42 was not found."),
      );

      const result = await drive(clock, ai.generateText({ model, tools, stopWhen: ai.stepCountIs(5), prompt: "find order 42" }));

      expect(result.text).toBe("Order 42 was not found.");
      expect(state.lookups).toBe(1);
      const [seen] = toolOutputsSeen(model.doGenerateCalls[1]);
      expect(seen).toMatchObject({ toolName: "lookup", toolCallId: "c1" });
      const text = errorText(seen);
      expect(text).toContain("The tool 'lookup' failed");
      expect(text).toContain("no order with id 42: ids look like ORD-1234");
      expect(text).toContain("corrected arguments");
      expect(text).toContain('"recoverable":true');
    });

    it("a 503 the server reports is retried in place after the backoff: the model sees only the result", async () => {
      const clock = createFakeClock();
      const state = backend();
      state.searchFailures = 2;
      const recorder = recordEvents();
      const tools = withRetryReflect(await mcpTools(state), RetryReflectPlugin.create({ clock, observers: [recorder] }));
      const model = scriptedModel(callTools({ name: "search", input: { query: "retry" }, id: "c1" }), reply("Found it."));

      const result = await drive(clock, ai.generateText({ model, tools, stopWhen: ai.stepCountIs(5), prompt: "search" }));

      expect(result.text).toBe("Found it.");
      expect(state.searches).toBe(3);
      expect(model.doGenerateCalls).toHaveLength(2); // the retries cost no model step
      const [seen] = toolOutputsSeen(model.doGenerateCalls[1]);
      expect(seen?.toolName).toBe("search");
      expect(JSON.stringify(seen?.output)).toContain("found retry");
      expect(JSON.stringify(seen?.output)).not.toContain("503");
      expect(clock.sleeps).toEqual([500, 1000]);
      expect(recorder.events.filter((event) => event.type === "retry").map((event) => event.fields)).toMatchObject([
        { attempt: 1, mode: "in_place", error_code: "TRANSIENT" },
        { attempt: 2, mode: "in_place", error_code: "TRANSIENT" },
      ]);
    });

    it("once the circuit opens, another run's call is turned away at once without reaching the server, and availableTools hides the tool from the next turn", async () => {
      const clock = createFakeClock();
      const state = backend();
      const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 2, circuitBreakerResetMs: 60_000 });
      const raw = await mcpTools(state);
      // Each run wraps the tools: a scope of its own (the circuits are the plugin's, shared).
      const run = (model: ReturnType<typeof scriptedModel>, activeTools: boolean) => {
        const tools = withRetryReflect(raw, plugin);
        return drive(
          clock,
          ai.generateText({
            model,
            tools,
            stopWhen: ai.stepCountIs(6),
            ...(activeTools ? { prepareStep: () => ({ activeTools: availableTools(plugin, tools) }) } : {}),
            prompt: "find order 42",
          }),
        );
      };

      // Two failures open the circuit for 60 s, beyond the call's patience: the model is told the tool is temporarily unavailable.
      const first = scriptedModel(
        callTools({ name: "lookup", input: { id: "1" }, id: "c1" }),
        callTools({ name: "lookup", input: { id: "2" }, id: "c2" }),
        reply("The order service is down."),
      );
      await run(first, false);
      expect(state.lookups).toBe(2);
      expect(plugin.circuitState("lookup")).toBe("open");
      const opened = errorText(toolOutputsSeen(first.doGenerateCalls[2]).find((part) => part.toolCallId === "c2"));
      expect(opened).toMatch(/The tool 'lookup' is temporarily unavailable.*about 60 s/);
      expect(opened).toContain('"retry_after_ms":60000');

      // Without hiding, the next run's call is refused at once without reaching the server.
      const second = scriptedModel(callTools({ name: "lookup", input: { id: "3" }, id: "d1" }), reply("Still down."));
      const before = clock.now();
      await run(second, false);
      expect(state.lookups).toBe(2);
      expect(clock.now()).toBe(before); // no wait: the probe is 60 s away, beyond the call's patience
      const refused = errorText(toolOutputsSeen(second.doGenerateCalls[1])[0]);
      expect(refused).toContain('"error_code":"CIRCUIT_OPEN"');
      expect(refused).toContain('"recoverable":true');
      expect(refused).toMatch(/temporarily unavailable.*about 60 s: call it again then with the same arguments/);
      expect(refused).not.toMatch(/do not call/i);

      // With availableTools in prepareStep, the next run is not offered the tool while its circuit is open.
      const third = scriptedModel(callTools({ name: "search", input: { query: "order 42" }, id: "e1" }), reply("From the docs."));
      await run(third, true);
      expect(toolsOffered(third.doGenerateCalls[0])).toEqual(["send_email", "search"]);
      expect(state.lookups).toBe(2);
    });

    it("a write is replayed, never sent twice, across two runs of one tenant sharing a store; another tenant's runs", async () => {
      const state = backend();
      const store = new InMemoryIdempotencyStore();
      // The run's context: AI SDK 6 gives every tool `experimental_context`, AI SDK 7 each tool its `toolsContext` entry as `context`.
      const tenant = ({ options }: { options: { experimental_context?: unknown; context?: unknown } }) =>
        ((options.context ?? options.experimental_context) as { tenant: string }).tenant;
      // Two processes: each its own MCP client (and server connection), plugin and wrapper; one store.
      const wrapped = async () =>
        withRetryReflect(await mcpTools(state), RetryReflectPlugin.create({ idempotency: { store } }), {
          namespace: tenant,
          scope: tenant,
        });
      const [inFirst, inSecond] = await Promise.all([wrapped(), wrapped()]);
      const contextOf = (who: string) => ({ experimental_context: { tenant: who }, toolsContext: { send_email: { tenant: who } } });
      const run = (tools: ToolSet, who: string, id: string) => {
        const model = scriptedModel(callTools({ name: "send_email", input: { to: "ana@example.com" }, id }), reply("Sent."));
        return ai
          .generateText({ model, tools, stopWhen: ai.stepCountIs(3), prompt: "email Ana", ...contextOf(who) })
          .then(() => toolOutputsSeen(model.doGenerateCalls[1]));
      };

      const original = await run(inFirst, "acme", "c1");
      const replayed = await run(inSecond, "acme", "c2"); // the run re-issued after a crash, in another process
      expect(state.sent).toEqual(["ana@example.com"]);
      expect(replayed[0]?.output).toEqual(original[0]?.output);
      expect(JSON.stringify(original[0]?.output)).toContain("sent to ana@example.com");

      await run(inSecond, "globex", "c3"); // another tenant's identical write is its own
      expect(state.sent).toEqual(["ana@example.com", "ana@example.com"]);
    });

    it("leaves approvals to the AI SDK: the call waits for approval, and once approved runs under the plugin, once", async () => {
      const clock = createFakeClock();
      const state = backend();
      const given = await mcpTools(state);
      const started: Array<{ toolName: string; effect: string }> = []; // the calls the plugin ran
      const plugin = RetryReflectPlugin.create({
        clock,
        observers: [{ onCallStart: ({ toolName, effect }) => void started.push({ toolName, effect }) }],
      });
      const tools = withRetryReflect({ ...given, send_email: { ...given.send_email, needsApproval: true } } as ToolSet, plugin);
      expect((tools.send_email as { needsApproval?: unknown }).needsApproval).toBe(true);

      const asking = scriptedModel(callTools({ name: "send_email", input: { to: "ana@example.com" }, id: "c1" }));
      const prompt: ModelMessage[] = [{ role: "user", content: "email Ana" }];
      const asked = await drive(clock, ai.generateText({ model: asking, tools, stopWhen: ai.stepCountIs(3), messages: prompt }));
      const request = asked.content.find((part) => part.type === "tool-approval-request");
      expect(request).toMatchObject({ type: "tool-approval-request", toolCall: { toolName: "send_email", toolCallId: "c1" } });
      expect(state.sent).toEqual([]); // nothing ran before the approval
      expect(started).toEqual([]);

      const approved = scriptedModel(reply("Sent."));
      const messages: ModelMessage[] = [
        ...prompt,
        ...asked.response.messages,
        {
          role: "tool",
          content: [{ type: "tool-approval-response", approvalId: (request as { approvalId: string }).approvalId, approved: true }],
        },
      ];
      const result = await drive(clock, ai.generateText({ model: approved, tools, stopWhen: ai.stepCountIs(3), messages }));

      expect(result.text).toBe("Sent.");
      expect(state.sent).toEqual(["ana@example.com"]);
      expect(started).toEqual([{ toolName: "send_email", effect: "write" }]); // a write, by its MCP annotations
      const [seen] = toolOutputsSeen(approved.doGenerateCalls[0]);
      expect(seen).toMatchObject({ toolName: "send_email", toolCallId: "c1" });
      expect(JSON.stringify(seen?.output)).toContain("sent to ana@example.com");
    });

    it("an abort during an in-place backoff ends the run with its reason: the server is not called again", async () => {
      const clock = createFakeClock();
      const state = backend();
      state.searchFailures = Number.POSITIVE_INFINITY;
      const tools = withRetryReflect(
        await mcpTools(state),
        RetryReflectPlugin.create({ clock, initialBackoffMs: 30_000, maxBackoffMs: 30_000 }),
      );
      const controller = new AbortController();
      const model = scriptedModel(callTools({ name: "search", input: { query: "x" }, id: "c1" }), reply("never"));
      const run = ai.generateText({ model, tools, stopWhen: ai.stepCountIs(3), abortSignal: controller.signal, prompt: "search" });
      run.catch(() => undefined);

      for (let round = 0; round < 1000 && clock.pendingSleeps() === 0; round++) await new Promise<void>((resolve) => setImmediate(resolve));
      expect(clock.sleeps).toEqual([30_000]);
      const reason = new Error("the user cancelled");
      controller.abort(reason);

      await expect(run).rejects.toBe(reason);
      expect(state.searches).toBe(1);
      expect(clock.now()).toBe(0); // the backoff was never waited out
      expect(model.doGenerateCalls).toHaveLength(1);
    });
  });
