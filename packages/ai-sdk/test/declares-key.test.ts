import { RetryReflectPlugin } from "@retry-reflect/core";
import { declaresField } from "@retry-reflect/core/adapter/options";
import { createFakeClock } from "@retry-reflect/core/testing";
import { jsonSchema, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as zm from "zod/mini";
import * as z3 from "zod/v3";
import { withRetryReflect } from "../src/index.js";
import { drive } from "./helpers.js";

// Keys only from tools that declare them: a write tool whose inputSchema has no key argument runs
// under a derived key (it was refused with IDEMPOTENCY_KEY_REQUIRED, asking the model for an
// argument the tool's schema does not take); one whose schema declares it is still asked for it.

const options = { toolCallId: "c1", messages: [], abortSignal: undefined, experimental_context: undefined };

describe("declaresField (what adapters read of a tool's schema)", () => {
  it("reads zod 4, zod 4 mini, zod 3, JSON Schema and the AI SDK's jsonSchema()", () => {
    const cases: ReadonlyArray<readonly [string, unknown]> = [
      ["zod 4", z.object({ path: z.string() })],
      ["zod 4 mini", zm.object({ path: zm.string() })],
      ["zod 3", z3.object({ path: z3.string() })],
      ["JSON Schema", { type: "object", properties: { path: { type: "string" } } }],
      ["jsonSchema()", jsonSchema({ type: "object", properties: { path: { type: "string" } } })],
    ];
    for (const [name, schema] of cases) {
      expect(declaresField(schema, "path"), name).toBe(true);
      expect(declaresField(schema, "idempotency_key"), name).toBe(false);
      expect(declaresField(schema, "toString"), name).toBe(false); // own properties only
    }
  });

  it("cannot tell (undefined) for no schema, a non-object schema, or one that throws when read", () => {
    const trap = new Proxy(
      {},
      {
        get() {
          throw new Error("trap");
        },
        has() {
          throw new Error("trap");
        },
      },
    );
    for (const schema of [undefined, null, "x", z.string(), z3.string(), { anyOf: [] }, trap]) {
      expect(declaresField(schema, "idempotency_key")).toBeUndefined();
    }
  });
});

describe("withRetryReflect: write tools and their key argument", () => {
  it("a write tool without the key in its inputSchema runs once under a derived key; the same call again is replayed", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { edit_file: "write" } });
    let runs = 0;
    const tools = withRetryReflect(
      { edit_file: tool({ inputSchema: z.object({ path: z.string(), text: z.string() }), execute: async () => `edited #${++runs}` }) },
      plugin,
      { scope: "conversation-1" },
    );
    const execute = tools.edit_file.execute as (input: unknown, options: unknown) => Promise<unknown>;
    expect(await drive(clock, execute({ path: "a", text: "x" }, options))).toBe("edited #1");
    expect(await drive(clock, execute({ path: "a", text: "x" }, { ...options, toolCallId: "c2" }))).toBe("edited #1");
    expect(runs).toBe(1);
  });

  it("a write tool whose inputSchema declares the key is asked for it, as before", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { pay: "write" } });
    let runs = 0;
    const tools = withRetryReflect(
      {
        pay: tool({
          inputSchema: z.object({ amount: z.number(), idempotency_key: z.string().optional() }),
          execute: async () => ++runs,
        }),
      },
      plugin,
    );
    const execute = tools.pay.execute as (input: unknown, options: unknown) => Promise<unknown>;
    const refused = await drive(clock, execute({ amount: 5 }, options)).catch((error: unknown) => error);
    expect(String((refused as Error).message ?? refused)).toContain("IDEMPOTENCY_KEY_REQUIRED");
    expect(runs).toBe(0);
  });
});
