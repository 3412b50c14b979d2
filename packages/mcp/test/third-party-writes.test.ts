import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { IDEMPOTENCY_META_KEY, withRetryReflect } from "../src/index.js";
import { ACCESS_DENIED_TEXT, filesystemKindServer } from "./helpers/filesystem-kind-server.js";
import { drive } from "./helpers.js";

// A server nobody here wrote, of the server-filesystem kind, through a real SDK Client: its write
// tool (annotated destructiveHint, no idempotency key in its schema) runs under a derived key
// instead of being refused for a key its schema does not take; its "Access denied - path outside
// allowed directories" is reflected (a corrected path works), not a credentials stop.

const isText = (result: unknown): string => {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((block) => block.text ?? "").join("\n");
};

describe("third-party write tools and permission errors", () => {
  it("a destructive write tool without a key in its schema runs once, its derived key in _meta, never in the arguments", async () => {
    const { client, writes, received } = await filesystemKindServer();
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });
    const result = await drive(clock, tools.callTool({ name: "write_file", arguments: { path: "/tmp/x/a.txt", content: "hi" } }));
    expect((result as { isError?: boolean }).isError).not.toBe(true);
    expect(writes).toEqual([{ path: "/tmp/x/a.txt", content: "hi" }]);
    const call = received.find((each) => each.tool === "write_file");
    expect(call?.args).toEqual({ path: "/tmp/x/a.txt", content: "hi" });
    expect(String(call?.meta?.[IDEMPOTENCY_META_KEY])).toMatch(/^derived-/);
  });

  it("a key argument the model adds anyway is not sent to the server", async () => {
    const { client, received } = await filesystemKindServer();
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });
    await drive(
      clock,
      tools.callTool({ name: "write_file", arguments: { path: "/tmp/x/b.txt", content: "hi", idempotency_key: "made-up" } }),
    );
    expect(received.find((each) => each.tool === "write_file")?.args).toEqual({ path: "/tmp/x/b.txt", content: "hi" });
  });

  it("'Access denied - path outside allowed directories' is PERMISSION_DENIED, reflected; the corrected path is read", async () => {
    const { client } = await filesystemKindServer({ "/tmp/x/notes.txt": "hello" });
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });
    const denied = await drive(clock, tools.callTool({ name: "read_text_file", arguments: { path: "/etc/passwd" } }));
    expect((denied as { isError?: boolean }).isError).toBe(true);
    const text = isText(denied);
    expect(text).toContain('"error_code":"PERMISSION_DENIED"');
    expect(text).toContain('"recoverable":true');
    expect(text).toContain("provide corrected arguments");
    expect(text).toContain(ACCESS_DENIED_TEXT);
    expect(text).not.toContain("not authorised");
    const corrected = await drive(clock, tools.callTool({ name: "read_text_file", arguments: { path: "/tmp/x/notes.txt" } }));
    expect(corrected).toEqual({ content: [{ type: "text", text: "hello" }] });
  });
});
