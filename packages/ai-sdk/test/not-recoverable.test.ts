import { RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RetryReflectToolError, withRetryReflect } from "../src/index.js";
import { callTools, drive, reply, scriptedModel, toolOutputsSeen } from "./helpers.js";

describe("a non-recoverable failure", () => {
  it("stops at once: the model is told not to call the tool again, with the structured error", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let runs = 0;
    const getOrder = tool({
      description: "Looks an order up.",
      inputSchema: z.object({ id: z.string() }),
      execute: async ({ id }): Promise<string> => {
        runs += 1;
        throw new ToolError({
          code: "RECORD_NOT_FOUND",
          message: `No order ${id}.`,
          recoverable: false,
          suggestedAction: "Do not call 'get_order' again for this order; tell the user it does not exist.",
        });
      },
    });
    const model = scriptedModel(callTools({ name: "get_order", input: { id: "A-1" }, id: "call_1" }), reply("There is no order A-1."));

    const result = await drive(
      clock,
      generateText({ model, tools: withRetryReflect({ get_order: getOrder }, plugin), stopWhen: stepCountIs(5), prompt: "order A-1?" }),
    );

    expect(runs).toBe(1);
    expect(clock.sleeps).toEqual([]);
    expect(toolOutputsSeen(model.doGenerateCalls[1])).toEqual([
      {
        toolName: "get_order",
        toolCallId: "call_1",
        output: {
          type: "error-text",
          value:
            "The tool 'get_order' failed with: \"No order A-1.\". This error is not recoverable, do not retry it. Do not call 'get_order' again for this task; tell the user what failed.\n\n" +
            '{"error_code":"RECORD_NOT_FOUND","message":"No order A-1.","recoverable":false,"suggested_action":"Do not call \'get_order\' again for this task; tell the user what failed.","tool_suggested_action":"Do not call \'get_order\' again for this order; tell the user it does not exist.","attempt":1,"max_retries":3}',
        },
      },
    ]);
    const part = result.steps[0]?.content.find((each) => each.type === "tool-error");
    const error = part?.type === "tool-error" ? part.error : undefined;
    expect(
      RetryReflectToolError.isInstance(error) && { status: error.status, reason: error.reason, code: error.structuredError.error_code },
    ).toEqual({
      status: "failed",
      reason: "not_recoverable",
      code: "RECORD_NOT_FOUND",
    });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ name: "RetryReflectToolError", status: "failed", reason: "not_recoverable" });
  });
});
