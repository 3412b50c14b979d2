import { describe, expect, it } from "vitest";
import { runToolCall } from "../src/adapter.js";
import { RetryReflectPlugin, type ToolContext } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// Keys only from tools that declare them: a write tool whose schema has no key argument (an MCP
// server's `edit_file`, a host tool without the field) gets a derived key and is never refused for a
// missing one; the key argument is never sent to it. `declaresKey` comes from the adapter.

function setup(options: Parameters<typeof RetryReflectPlugin.create>[0] = {}) {
  const clock = createFakeClock();
  const plugin = RetryReflectPlugin.create({ clock, toolEffects: { edit_file: "write" }, ...options });
  const runs: Array<{ args: unknown; key: string | undefined }> = [];
  const edit = (args: unknown, context: ToolContext) => {
    runs.push({ args, key: context.idempotencyKey });
    return `edited #${runs.length}`;
  };
  return { plugin, clock, runs, edit };
}

describe("ToolCall.declaresKey", () => {
  it("false: a write without a key runs under a derived key, never refused for a missing one", async () => {
    const { plugin, runs, edit } = setup();
    const outcome = await plugin.execute(
      { toolName: "edit_file", args: { path: "a.txt", text: "x" }, declaresKey: false, scope: "s" },
      edit,
    );
    expect(outcome).toMatchObject({ status: "success", value: "edited #1", replayed: false });
    expect(runs).toHaveLength(1);
    expect(runs[0]?.key).toMatch(/^derived-/);
    // The same call again in the same run is the same operation: replayed, not run twice.
    const again = await plugin.execute({ toolName: "edit_file", args: { path: "a.txt", text: "x" }, declaresKey: false, scope: "s" }, edit);
    expect(again).toMatchObject({ status: "success", value: "edited #1", replayed: true });
    expect(runs).toHaveLength(1);
  });

  it("false: a key argument the model made up is removed before the tool runs and is not the key", async () => {
    const { plugin, runs, edit } = setup();
    await plugin.execute(
      { toolName: "edit_file", args: { path: "a.txt", text: "x", idempotency_key: "k-1" }, declaresKey: false, scope: "s" },
      edit,
    );
    expect(runs[0]?.args).toEqual({ path: "a.txt", text: "x" });
    expect(runs[0]?.key).toMatch(/^derived-/);
    // Another made-up key for the same edit: still the same operation (the key was never the model's).
    const second = await plugin.execute(
      { toolName: "edit_file", args: { path: "a.txt", text: "x", idempotency_key: "k-2" }, declaresKey: false, scope: "s" },
      edit,
    );
    expect(second).toMatchObject({ status: "success", replayed: true });
    expect(runs).toHaveLength(1);
  });

  it("false: a transient failure is retried in place, safely (the derived key holds)", async () => {
    const { plugin, clock, runs } = setup();
    let failures = 0;
    const flaky = (args: unknown, context: ToolContext) => {
      runs.push({ args, key: context.idempotencyKey });
      if (failures++ === 0) throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      return "edited";
    };
    const pending = plugin.execute({ toolName: "edit_file", args: { path: "a.txt" }, declaresKey: false }, flaky);
    await clock.runAll();
    expect(await pending).toMatchObject({ status: "success", value: "edited", attempt: 2 });
    expect(runs.map((run) => run.key)).toEqual([runs[0]?.key, runs[0]?.key]);
  });

  it("true or undefined: requireKey applies as before", async () => {
    const { plugin, runs, edit } = setup();
    for (const declaresKey of [true, undefined]) {
      const outcome = await plugin.execute({ toolName: "edit_file", args: { path: "a.txt" }, declaresKey }, edit);
      expect(outcome.status === "reflect" && outcome.error.code).toBe("IDEMPOTENCY_KEY_REQUIRED");
    }
    expect(runs).toHaveLength(0);
    const keyed = await plugin.execute({ toolName: "edit_file", args: { path: "a.txt", idempotency_key: "k" }, declaresKey: true }, edit);
    expect(keyed.status).toBe("success");
    expect(runs[0]).toEqual({ args: { path: "a.txt", idempotency_key: "k" }, key: "k" });
  });

  it("false with derive: 'always' stays 'always'; a read tool is untouched", async () => {
    const { plugin, runs, edit } = setup({ idempotency: { derive: "always" } });
    await plugin.execute({ toolName: "edit_file", args: { path: "a.txt" }, declaresKey: false }, edit);
    expect(runs[0]?.key).toMatch(/^derived-/);
    const read = await plugin.execute(
      { toolName: "read_file", args: { path: "a", idempotency_key: "x" }, declaresKey: false },
      (args) => args,
    );
    expect(read).toMatchObject({ status: "success", value: { path: "a", idempotency_key: "x" } });
  });

  it("a declaresKey that is not a boolean is rejected, naming the field", async () => {
    const { plugin, edit } = setup();
    await expect(plugin.execute({ toolName: "edit_file", args: {}, declaresKey: "no" as never }, edit)).rejects.toThrow(/declaresKey/);
  });

  it("a host call's declaresKey is read for a write only: a read tool's failure never asks for it", async () => {
    const { plugin } = setup();
    let reads = 0;
    const host = (toolName: string, run: () => unknown) => ({
      toolName,
      args: { path: "a.txt" },
      scope: "run-1",
      get declaresKey() {
        reads++;
        return false;
      },
      run,
    });
    const failing = await runToolCall(
      plugin,
      host("read_file", () => {
        throw new Error("Invalid path");
      }),
    );
    expect(failing.status).toBe("reflect");
    expect(reads).toBe(0);
    const write = await runToolCall(
      plugin,
      host("edit_file", () => "edited"),
    );
    expect(write.status).toBe("success");
    expect(reads).toBeGreaterThan(0);
  });
});
