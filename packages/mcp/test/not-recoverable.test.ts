import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, drive, firstText } from "./helpers.js";

describe("a failure the model cannot fix", () => {
  it("stops at once: one server call, an isError result with the stop instruction and the structured error", async () => {
    let calls = 0;
    const { client } = await connect((server) => {
      server.registerTool("crm_lookup", { inputSchema: { email: z.string() } }, async () => {
        calls += 1;
        throw new Error("401 Unauthorized: invalid api key");
      });
    });
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });

    const result = await drive(clock, tools.callTool({ name: "crm_lookup", arguments: { email: "a@example.com" } }));

    expect(calls).toBe(1);
    expect(clock.now()).toBe(0);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error_code: "UNAUTHORIZED", recoverable: false });
    expect(result._meta).toEqual({ "retry-reflect/outcome": { status: "failed", attempt: 1, reason: "not_recoverable" } });
    expect(firstText(result)).toContain('"error_code":"UNAUTHORIZED"');
    expect(firstText(result)).toMatch(/Do not call it again/);
  });
});
