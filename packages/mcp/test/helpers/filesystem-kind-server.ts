// An in-process MCP server "of the server-filesystem kind", run through a real SDK `Client` over
// `InMemoryTransport.createLinkedPair()`: offline, fast, and shaped like
// `@modelcontextprotocol/server-filesystem` where the adapter's decisions depend on it:
// - `write_file` is a write (annotated `destructiveHint: true`, as server-filesystem's `edit_file`
//   and `move_file` are) whose input schema declares NO idempotency key field: the model cannot
//   send one, as with any third-party server's write tool;
// - `read_text_file` outside the allowed directory fails as server-filesystem does (it throws, and
//   `McpServer` turns that into an `isError` result with the message as its text):
//   `Access denied - path outside allowed directories: /etc/passwd not in /tmp/x`.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { connect } from "../helpers.js";

/** The one directory the fixture allows. */
export const ALLOWED_DIRECTORY = "/tmp/x";

/** What server-filesystem answers for a path outside its allowed directories (here, `/etc/passwd`). */
export function accessDeniedText(path: string): string {
  return `Access denied - path outside allowed directories: ${path} not in ${ALLOWED_DIRECTORY}`;
}

/** The text of a read of `/etc/passwd`. */
export const ACCESS_DENIED_TEXT = accessDeniedText("/etc/passwd");

/** One request as the fixture's handler received it (after the server's own schema check). */
export interface ReceivedCall {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The request's `_meta` (where the adapter forwards an idempotency key). */
  readonly meta: Record<string, unknown> | undefined;
}

export interface FilesystemKindServer {
  readonly client: Client;
  readonly server: McpServer;
  /** The files, by absolute path: what each write left. */
  readonly files: Map<string, string>;
  /** Every call that reached a handler, in order (a write that was not run is not here). */
  readonly received: ReceivedCall[];
  /** The writes that ran, in order. */
  readonly writes: ReadonlyArray<{ readonly path: string; readonly content: string }>;
}

function inside(path: string): boolean {
  return path.startsWith(`${ALLOWED_DIRECTORY}/`);
}

/** Starts the fixture and connects a real `Client` to it; `files` seeds its contents. */
export async function filesystemKindServer(files: Record<string, string> = {}): Promise<FilesystemKindServer> {
  const contents = new Map(Object.entries(files));
  const received: ReceivedCall[] = [];
  const writes: Array<{ path: string; content: string }> = [];
  const { client, server } = await connect((mcp) => {
    mcp.registerTool(
      "write_file",
      {
        description: "Create a new file or overwrite an existing one. Only works within allowed directories.",
        inputSchema: { path: z.string(), content: z.string() },
        annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
      },
      async ({ path, content }, extra) => {
        received.push({ tool: "write_file", args: { path, content }, meta: extra._meta });
        if (!inside(path)) throw new Error(accessDeniedText(path));
        contents.set(path, content);
        writes.push({ path, content });
        return { content: [{ type: "text" as const, text: `Successfully wrote to ${path}` }] };
      },
    );
    mcp.registerTool(
      "read_text_file",
      {
        description: "Read the complete contents of a file as text. Only works within allowed directories.",
        inputSchema: { path: z.string() },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async ({ path }, extra) => {
        received.push({ tool: "read_text_file", args: { path }, meta: extra._meta });
        if (!inside(path)) throw new Error(accessDeniedText(path));
        const text = contents.get(path);
        if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
        return { content: [{ type: "text" as const, text }] };
      },
    );
  });
  return { client, server, files: contents, received, writes };
}
