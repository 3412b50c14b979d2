import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { effectOfAnnotations, withRetryReflect } from "../src/index.js";
import { freshTempDir, type RealServer, startFilesystemServer } from "./helpers/real-servers.js";
import { drive, firstText, recordCalls, recordEvents } from "./helpers.js";

// `@modelcontextprotocol/server-filesystem` as a user runs it: a child process over stdio, allowed
// one directory (a fresh temp directory for this file, removed at the end), its real `Client`
// wrapped by the adapter.

let directory: Awaited<ReturnType<typeof freshTempDir>>;
let server: RealServer;
/** The clock of the helper's own wrapper (`server.tools`). */
const serverClock = createFakeClock();

beforeAll(async () => {
  directory = await freshTempDir("retry-reflect-mcp-fs-");
  server = await startFilesystemServer(directory.path, { clock: serverClock });
}, 30_000);

afterAll(async () => {
  await server?.close();
  await directory?.remove();
});

/** A new wrapper over the running server, with a plugin of its own on a fake clock. */
function wrap() {
  const clock = createFakeClock();
  const recorder = recordEvents();
  const calls = recordCalls();
  const plugin = RetryReflectPlugin.create({ clock, observers: [recorder, calls] });
  return { tools: withRetryReflect(server.client, plugin), plugin, clock, recorder, calls };
}

describe("server-filesystem, started over stdio", () => {
  it("a read of a missing file is reflected to the model (not a stop, not retried in place); the corrected read succeeds", async () => {
    const { tools, plugin, clock, recorder } = wrap();
    const missing = join(directory.path, "missing.txt");

    const result = (await drive(clock, tools.callTool({ name: "read_text_file", arguments: { path: missing } }))) as CallToolResult;

    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({ "retry-reflect/outcome": { status: "reflect", attempt: 1 } });
    expect(result.structuredContent).toMatchObject({ recoverable: true });
    expect((result.structuredContent as { message: string }).message).toContain(`ENOENT: no such file or directory, open '${missing}'`);
    expect(firstText(result)).toContain(missing); // the model is told which path failed
    // One retry event, the reflection: no attempt was repeated in place.
    expect(recorder.events.map((event) => [event.type, (event.fields as { mode?: string }).mode])).toEqual([["retry", "reflect"]]);
    expect(plugin.circuits.state("read_text_file")).toBe("closed");

    await writeFile(join(directory.path, "present.txt"), "found it");
    const corrected = await drive(
      clock,
      tools.callTool({ name: "read_text_file", arguments: { path: join(directory.path, "present.txt") } }),
    );
    expect(corrected.isError).toBeUndefined();
    expect(firstText(corrected)).toBe("found it");
  });

  it("its tool annotations are read: edit_file and move_file are writes, write_file and create_directory idempotent, the rest reads", async () => {
    const { tools, clock, calls } = wrap();
    const listed = await tools.listTools();
    const hinted = Object.fromEntries(listed.tools.map((tool) => [tool.name, effectOfAnnotations(tool.annotations)]));
    expect(hinted).toEqual({
      read_file: "read",
      read_text_file: "read",
      read_media_file: "read",
      read_multiple_files: "read",
      write_file: "idempotent",
      edit_file: "write",
      create_directory: "idempotent",
      list_directory: "read",
      list_directory_with_sizes: "read",
      directory_tree: "read",
      move_file: "write",
      search_files: "read",
      get_file_info: "read",
      list_allowed_directories: "read",
    });

    // The effect each call runs with is the annotation's. Every tool but list_allowed_directories
    // requires an argument, so `{}` fails the server's input schema: nothing is written or moved.
    for (const tool of listed.tools) await drive(clock, tools.callTool({ name: tool.name, arguments: {} }));
    expect(Object.fromEntries(calls.calls.map((call) => [call.toolName, call.effect]))).toEqual(hinted);
  });

  it("a success passes through untouched: the wrapped client's result is the client's own", async () => {
    const { tools, clock } = wrap();
    await writeFile(join(directory.path, "notes.md"), "# notes\nline 2\n");
    const params = { name: "read_text_file", arguments: { path: join(directory.path, "notes.md") } };

    const wrapped = await drive(clock, tools.callTool(params));
    const direct = await server.client.callTool(params);

    expect(wrapped).toEqual(direct);
    expect(wrapped.structuredContent).toEqual({ content: "# notes\nline 2\n" });
  });

  it("an idempotent write (write_file) runs through the helper's own wrapper and its file is on disk", async () => {
    const path = join(directory.path, "written.txt");
    const result = await drive(
      serverClock,
      server.tools.callTool({ name: "write_file", arguments: { path, content: "written by the model" } }),
    );
    expect(result.isError).toBeUndefined();
    expect(firstText(result)).toContain("Successfully wrote to");
    expect(await readFile(path, "utf8")).toBe("written by the model");
  });
});

describe("server-filesystem's write tools and its permission errors, as a user meets them", () => {
  it("move_file and edit_file (destructive, no key in their schemas) run: not refused for a key they cannot take", async () => {
    const { tools, clock, calls } = wrap();
    const from = join(directory.path, "draft.txt");
    const to = join(directory.path, "final.txt");
    await writeFile(from, "hello world");
    const moved = (await drive(
      clock,
      tools.callTool({ name: "move_file", arguments: { source: from, destination: to } }),
    )) as CallToolResult;
    expect(moved.isError).toBeFalsy();
    expect(await readFile(to, "utf8")).toBe("hello world");
    const edited = (await drive(
      clock,
      tools.callTool({ name: "edit_file", arguments: { path: to, edits: [{ oldText: "world", newText: "there" }] } }),
    )) as CallToolResult;
    expect(edited.isError).toBeFalsy();
    expect(await readFile(to, "utf8")).toBe("hello there");
    expect(calls.calls.map((call) => [call.toolName, call.effect])).toEqual([
      ["move_file", "write"],
      ["edit_file", "write"],
    ]);
  });

  it("a path outside the allowed directory is PERMISSION_DENIED, reflected; the model may use another path", async () => {
    const { tools, clock } = wrap();
    const denied = (await drive(clock, tools.callTool({ name: "read_text_file", arguments: { path: "/etc/hostname" } }))) as CallToolResult;
    expect(denied.isError).toBe(true);
    expect(denied.structuredContent).toMatchObject({ error_code: "PERMISSION_DENIED", recoverable: true });
    expect(firstText(denied)).toContain("Access denied");
    expect(firstText(denied)).toContain("provide corrected arguments");
  });
});
