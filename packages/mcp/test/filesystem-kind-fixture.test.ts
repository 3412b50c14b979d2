import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { withRetryReflect } from "../src/index.js";
import { ACCESS_DENIED_TEXT, filesystemKindServer } from "./helpers/filesystem-kind-server.js";
import { drive, recordCalls } from "./helpers.js";

// The fixture stands in for server-filesystem in tests that need no child process. These tests pin
// what it is (what the server says and declares), and what the adapter reads of it that does not
// depend on how a keyless write or an access-denied path is handled.

describe("the in-process server of the server-filesystem kind", () => {
  it("declares a destructive write tool whose input schema has no idempotency key field", async () => {
    const { client } = await filesystemKindServer();
    const { tools } = await client.listTools();
    const write = tools.find((tool) => tool.name === "write_file");
    expect(write?.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(write?.annotations?.idempotentHint).toBeUndefined();
    expect(Object.keys(write?.inputSchema.properties ?? {}).sort()).toEqual(["content", "path"]);
  });

  it("answers a read outside its directory as server-filesystem does: an isError result with the access-denied text", async () => {
    const { client, received } = await filesystemKindServer();
    const result = await client.callTool({ name: "read_text_file", arguments: { path: "/etc/passwd" } });
    expect(result).toEqual({ content: [{ type: "text", text: ACCESS_DENIED_TEXT }], isError: true });
    expect(ACCESS_DENIED_TEXT).toBe("Access denied - path outside allowed directories: /etc/passwd not in /tmp/x");
    expect(received).toEqual([{ tool: "read_text_file", args: { path: "/etc/passwd" }, meta: undefined }]);
  });

  it("runs a write called directly and reads it back", async () => {
    const { client, writes } = await filesystemKindServer();
    await client.callTool({ name: "write_file", arguments: { path: "/tmp/x/notes.txt", content: "hello" } });
    const read = await client.callTool({ name: "read_text_file", arguments: { path: "/tmp/x/notes.txt" } });
    expect(read).toEqual({ content: [{ type: "text", text: "hello" }] });
    expect(writes).toEqual([{ path: "/tmp/x/notes.txt", content: "hello" }]);
  });

  it("through the adapter: its annotations make write_file a write and read_text_file a read; a read inside passes through untouched", async () => {
    const { client } = await filesystemKindServer({ "/tmp/x/notes.txt": "hello" });
    const clock = createFakeClock();
    const recorder = recordCalls();
    const tools = withRetryReflect(client, { clock, observers: [recorder] });

    const read = await drive(clock, tools.callTool({ name: "read_text_file", arguments: { path: "/tmp/x/notes.txt" } }));
    expect(read).toEqual({ content: [{ type: "text", text: "hello" }] });
    // What the write's call then does (refused for its missing key, or run with a derived one) is not pinned here.
    await drive(clock, tools.callTool({ name: "write_file", arguments: { path: "/tmp/x/new.txt", content: "x" } }));

    expect(recorder.calls.map((call) => [call.toolName, call.effect])).toEqual([
      ["read_text_file", "read"],
      ["write_file", "write"],
    ]);
  });
});
