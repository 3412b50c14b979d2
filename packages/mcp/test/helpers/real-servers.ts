// Real MCP servers from npm, started as child processes over stdio (`StdioClientTransport`), with
// a real SDK `Client` wrapped by the adapter. Each start is one server process; `close()` ends it
// (the transport closes its stdin, then signals it). Nothing here waits for real time beyond the
// process start and its exit.
import { readFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { RetryReflectOptions, RetryReflectPlugin } from "@retry-reflect/core";
import { type RetryReflectClient, type RetryReflectMcpOptions, withRetryReflect } from "../../src/index.js";

/** The servers this package tests against, by their npm package (devDependencies, pinned). */
export const REAL_SERVERS = {
  filesystem: "@modelcontextprotocol/server-filesystem",
  everything: "@modelcontextprotocol/server-everything",
} as const;

export type RealServerName = keyof typeof REAL_SERVERS;

/** A started server: the real client, the same client wrapped by the adapter, and how to stop it. */
export interface RealServer {
  /** The SDK `Client`, connected over stdio. */
  readonly client: Client;
  /** `withRetryReflect(client, pluginOrOptions, adapterOptions)`. */
  readonly tools: RetryReflectClient<Client>;
  /** What the server wrote to stderr so far (its start-up banner, its warnings): for failure messages. */
  stderr(): string;
  /** Closes the client and ends the server process. Safe to call twice. */
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** The file a server package's `bin` runs (resolved from this package's node_modules). */
export function serverEntry(name: RealServerName): string {
  const manifestPath = require.resolve(`${REAL_SERVERS[name]}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === "string" ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  if (bin === undefined) throw new Error(`${REAL_SERVERS[name]} has no bin`);
  return join(dirname(manifestPath), bin);
}

/**
 * Starts a real server (`node <its bin> ...args`, the Node.js running the tests) and connects a
 * client to it. `pluginOrOptions` and `adapterOptions` are `withRetryReflect`'s; wrap
 * `server.client` again for a test that needs a plugin of its own.
 */
export async function startRealServer(
  name: RealServerName,
  args: readonly string[] = [],
  pluginOrOptions: RetryReflectPlugin | RetryReflectOptions = {},
  adapterOptions?: RetryReflectMcpOptions,
): Promise<RealServer> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [serverEntry(name), ...args], stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: "retry-reflect-tests", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    await transport.close().catch(() => undefined);
    throw new Error(`${REAL_SERVERS[name]} did not start: ${String(error)}\n${stderr}`);
  }
  let closed: Promise<void> | undefined;
  return {
    client,
    tools: withRetryReflect(client, pluginOrOptions, adapterOptions),
    stderr: () => stderr,
    close: () => {
      closed ??= client.close();
      return closed;
    },
  };
}

/** A fresh, empty directory under the OS temp dir (its real path: no symlink in it), and how to remove it. */
export async function freshTempDir(prefix: string): Promise<{ readonly path: string; remove(): Promise<void> }> {
  const path = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** `server-filesystem` allowed to use `directory` only. */
export function startFilesystemServer(
  directory: string,
  pluginOrOptions?: RetryReflectPlugin | RetryReflectOptions,
  adapterOptions?: RetryReflectMcpOptions,
): Promise<RealServer> {
  return startRealServer("filesystem", [directory], pluginOrOptions, adapterOptions);
}

/** `server-everything` over stdio. */
export function startEverythingServer(
  pluginOrOptions?: RetryReflectPlugin | RetryReflectOptions,
  adapterOptions?: RetryReflectMcpOptions,
): Promise<RealServer> {
  return startRealServer("everything", ["stdio"], pluginOrOptions, adapterOptions);
}
