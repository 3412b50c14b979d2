import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, settle } from "./helpers.js";

describe("the caller's abort", () => {
  it("cuts a backoff short: the call rejects with the signal's reason, no retry runs, no sleep is left pending", async () => {
    let calls = 0;
    const { client } = await connect((server) => {
      server.registerTool("search", { inputSchema: { query: z.string() } }, async () => {
        calls += 1;
        throw new Error("HTTP 503 Service Unavailable");
      });
    });
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });
    const controller = new AbortController();
    const reason = new Error("the user cancelled");

    const pending = tools.callTool({ name: "search", arguments: { query: "x" } }, undefined, { signal: controller.signal });
    pending.catch(() => undefined);
    await settle();
    expect(clock.pendingSleeps()).toBe(1); // waiting out the 500 ms backoff
    controller.abort(reason);

    await expect(pending).rejects.toBe(reason);
    expect(calls).toBe(1);
    expect(clock.now()).toBe(0);
    expect(clock.pendingSleeps()).toBe(0);
  });

  it("rejects at once when the signal is already aborted, without calling the server", async () => {
    let calls = 0;
    const { client } = await connect((server) => {
      server.registerTool("search", { inputSchema: { query: z.string() } }, async () => {
        calls += 1;
        return { content: [] };
      });
    });
    const reason = new Error("gone");
    const tools = withRetryReflect(client, { clock: createFakeClock() });
    await expect(
      tools.callTool({ name: "search", arguments: { query: "x" } }, undefined, { signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason);
    expect(calls).toBe(0);
  });
});
