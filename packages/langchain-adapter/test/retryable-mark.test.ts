import { getRetryable, stampRetryable } from "@langchain/core/errors";
import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { type RetryReflectOptions, RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { type AgentMiddleware, createAgent, createMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware, withRetryReflect } from "../src/index.js";
import { callTools, drive } from "./helpers.js";

// LangChain's own "retry or not" mark (`stampRetryable` / `getRetryable` of `@langchain/core/errors`,
// honoured by `toolRetryMiddleware`) is the default of the policy's `shouldRetry`.

/** A transient failure to the core: retried in place when unmarked. */
const unavailable = () => new Error("HTTP 503 Service Unavailable");
/** A non-recoverable failure to the core (UNAUTHORIZED): stopped when unmarked. */
const unauthorized = () => Object.assign(new Error("Request failed: Unauthorized"), { status: 401 });

/** An agent whose `search` tool throws `fail()` on its first call and answers afterwards; the model calls it once. */
async function runAgent(fail: () => unknown, options: RetryReflectOptions = {}, inner: AgentMiddleware[] = []) {
  const clock = createFakeClock();
  const plugin = RetryReflectPlugin.create({ clock, ...options });
  let calls = 0;
  const search = tool(
    async ({ query }) => {
      calls += 1;
      if (calls === 1) throw fail();
      return `results for ${query}`;
    },
    { name: "search", description: "Search the docs.", schema: z.object({ query: z.string() }) },
  );
  const model = fakeModel()
    .respond(callTools({ name: "search", args: { query: "retry" }, id: "call_1" }))
    .respond(new AIMessage("done"));
  const agent = createAgent({ model, tools: [search], middleware: [retryReflectMiddleware(plugin), ...inner] });
  const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "q" }] }));
  const first = result.messages[2] as ToolMessage;
  return { first, calls: () => calls, clock, model };
}

/** What the model got for the first tool call: the tool's result, or the outcome of an error message. */
function outcomeOf(message: ToolMessage): unknown {
  return message.status === "error" ? message.response_metadata.retry_reflect : { status: "success", content: message.content };
}

describe("LangChain's retryable mark", () => {
  it("marked non-retryable: a transient error stops at once as not recoverable, the tool is not run again", async () => {
    const error = stampRetryable(unavailable(), false);
    expect(getRetryable(error)).toBe(false);
    const { first, calls, clock, model } = await runAgent(() => error);
    expect(first.status).toBe("error");
    expect(first.response_metadata.retry_reflect).toMatchObject({ status: "failed", reason: "not_recoverable" });
    expect(first.artifact).toMatchObject({ error_code: "TRANSIENT", recoverable: false });
    expect(String(first.content)).toContain("HTTP 503 Service Unavailable");
    expect(calls()).toBe(1);
    expect(clock.sleeps).toEqual([]);
    // The model saw the stop message and called no further tool: no reflection, no second run.
    expect(model.callCount).toBe(2);
  });

  it("marked non-retryable by a `MiddlewareError`'s cause: an inner middleware's own error stops too", async () => {
    let thrown = 0;
    const inner = createMiddleware({
      name: "inner",
      wrapToolCall: async (request, handler) => {
        thrown += 1;
        if (thrown === 1) throw stampRetryable(unavailable(), false); // wrapped by LangChain in a MiddlewareError
        return handler(request);
      },
    });
    const { first, calls, clock } = await runAgent(() => new Error("unused"), {}, [inner]);
    expect(first.response_metadata.retry_reflect).toMatchObject({ status: "failed", reason: "not_recoverable" });
    expect(thrown).toBe(1);
    expect(calls()).toBe(0);
    expect(clock.sleeps).toEqual([]);
  });

  it("marked retryable: an error the core would stop on is reflected to the model", async () => {
    const { first, calls } = await runAgent(() => stampRetryable(unauthorized(), true));
    expect(first.status).toBe("error");
    expect(first.response_metadata.retry_reflect).toMatchObject({ status: "reflect", attempt: 1 });
    expect(first.artifact).toMatchObject({ error_code: "UNAUTHORIZED", recoverable: true });
    expect(String(first.content)).toContain("Analyze what went wrong and provide corrected arguments.");
    expect(calls()).toBe(1);
  });

  it("marked retryable: a ToolError marked not recoverable is retried in place when transient", async () => {
    const quota = () => stampRetryable(new ToolError({ code: "RATE_LIMITED", message: "slow down", recoverable: false }), true);
    const { first, calls, clock } = await runAgent(quota);
    expect(outcomeOf(first)).toEqual({ status: "success", content: "results for retry" });
    expect(calls()).toBe(2);
    expect(clock.sleeps).toEqual([500]);
  });

  it("unmarked: unchanged (a transient error is retried in place, an unauthorized one stops)", async () => {
    const transient = await runAgent(unavailable);
    expect(outcomeOf(transient.first)).toEqual({ status: "success", content: "results for retry" });
    expect(transient.calls()).toBe(2);
    expect(transient.clock.sleeps).toEqual([500]);

    const denied = await runAgent(unauthorized);
    expect(denied.first.response_metadata.retry_reflect).toMatchObject({ status: "failed", reason: "not_recoverable" });
    expect(denied.calls()).toBe(1);
  });

  it("a user's `shouldRetry` wins over the mark; one that answers undefined leaves it to the mark", async () => {
    const retried = await runAgent(() => stampRetryable(unavailable(), false), { shouldRetry: () => true });
    expect(outcomeOf(retried.first)).toEqual({ status: "success", content: "results for retry" });
    expect(retried.calls()).toBe(2);

    const stopped = await runAgent(() => stampRetryable(unauthorized(), true), { shouldRetry: () => false });
    expect(stopped.first.response_metadata.retry_reflect).toMatchObject({ status: "failed", reason: "not_recoverable" });
    expect(stopped.calls()).toBe(1);

    const undecided = await runAgent(() => stampRetryable(unavailable(), false), { shouldRetry: () => undefined });
    expect(undecided.first.response_metadata.retry_reflect).toMatchObject({ status: "failed", reason: "not_recoverable" });
    expect(undecided.calls()).toBe(1);
  });

  it("withRetryReflect honours the mark too", async () => {
    let calls = 0;
    const search = tool(
      async () => {
        calls += 1;
        throw stampRetryable(unavailable(), false);
      },
      { name: "search", description: "Search the docs.", schema: z.object({ query: z.string() }) },
    );
    const clock = createFakeClock();
    const wrapped = withRetryReflect(search, RetryReflectPlugin.create({ clock }));
    const message = (await drive(
      clock,
      wrapped.invoke({ type: "tool_call", id: "call_1", name: "search", args: { query: "retry" } }),
    )) as ToolMessage;
    expect(message.response_metadata.retry_reflect).toMatchObject({ status: "failed", reason: "not_recoverable" });
    expect(calls).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });
});
