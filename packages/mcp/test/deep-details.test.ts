import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, drive, firstText } from "./helpers.js";

// A hostile server's error: ~30 KB of JSON nested 5,000 levels as `details`, a secret at the bottom.
const DEPTH = 5_000;
const deepJson = `${'{"a":'.repeat(DEPTH)}{"password":"SECRETDEEP"}${"}".repeat(DEPTH)}`;

/** How many `a` levels down to the first non-object, and what is there. */
function depthOf(value: unknown): { depth: number; leaf: unknown } {
  let depth = 0;
  let current = value;
  while (typeof current === "object" && current !== null && "a" in current) {
    current = (current as { a: unknown }).a;
    depth++;
  }
  return { depth, leaf: current };
}

async function callDeep(how: "structuredContent" | "text") {
  const { client } = await connect((server) => {
    server.registerTool("search", { inputSchema: { query: z.string() } }, async () => {
      const shape = `{"error_code":"UPSTREAM_ERROR","message":"upstream failed","recoverable":true,"details":${deepJson}}`;
      if (how === "text") return { content: [{ type: "text" as const, text: shape }], isError: true };
      return {
        content: [{ type: "text" as const, text: "upstream failed" }],
        structuredContent: JSON.parse(shape) as Record<string, unknown>,
        isError: true,
      };
    });
  });
  const clock = createFakeClock();
  return drive(clock, withRetryReflect(client, { clock }).callTool({ name: "search", arguments: { query: "x" } }));
}

describe("a server's details nested 5,000 levels deep", () => {
  expect(deepJson.length).toBeGreaterThan(30_000);

  for (const how of ["structuredContent", "text"] as const) {
    it(`in ${how}: the result is serializable, holds no secret, and its text no [object Object]`, async () => {
      const result = await callDeep(how);
      expect(result.isError).toBe(true);
      const serialized = JSON.stringify(result);
      expect(serialized).not.toContain("SECRETDEEP");
      expect(firstText(result)).not.toContain("[object Object]");
      expect(result.structuredContent).toMatchObject({ error_code: "UPSTREAM_ERROR", message: "upstream failed" });
      const details = (result.structuredContent as { details?: unknown }).details;
      expect(depthOf(details)).toEqual({ depth: 8, leaf: "[unserializable]" });
      // The text's JSON says the same.
      const text = firstText(result);
      const json = JSON.parse(text.slice(text.lastIndexOf("\n\n{") + 2)) as { details?: unknown };
      expect(json.details).toEqual(details);
    });
  }
});
