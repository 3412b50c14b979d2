import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { InvalidOptionError, ToolError } from "@retry-reflect/core";
import { RequestGuard, type RequestGuardOptions } from "@retry-reflect/core/adapter";
import { randomScope } from "@retry-reflect/core/adapter/options";
import { isSuccessfulCallToolResult } from "./call-tool-result-shape.js";
import { structuredToolError } from "./structured-tool-error.js";
import { IDEMPOTENCY_META_KEY } from "./with-retry-reflect.js";

/** The `_meta` key a replayed result carries (`true`): the handler did not run for this request. */
export const REPLAYED_META_KEY = "io.retry-reflect/replayed";

/** What `withIdempotency` reads from an `McpServer` handler's `extra` (the SDK's `RequestHandlerExtra`). */
export interface IdempotencyExtra {
  readonly _meta?: Readonly<Record<string, unknown>>;
  readonly signal?: AbortSignal;
  /** The transport's session (Streamable HTTP with sessions): the default namespace when the request has no `authInfo`. */
  readonly sessionId?: string;
  /** The request's verified token (`req.auth` on the HTTP server): its `clientId` is the default namespace. */
  readonly authInfo?: unknown;
}

/**
 * The options of `withIdempotency`: the store and the guard's limits (`store`, `ttlMs`, `leaseMs`,
 * `waitMs`, `maxResultBytes`, `clock`, `observers`: the core's `RequestGuardOptions`), and whose
 * requests share results.
 */
export interface WithIdempotencyOptions<Extra extends IdempotencyExtra = IdempotencyExtra> extends RequestGuardOptions {
  /**
   * Whose requests these are: a stored result is replayed only to a request of the same namespace,
   * and a key used in another namespace is a fresh key there. A non-empty string (every caller
   * shares it: one tenant), or a function of the request's `extra` returning one. By default the
   * caller's: the request's `authInfo.clientId`; else the transport's `sessionId`; else the
   * wrapper's own random id (one process serving one client, as on stdio; a stateless HTTP server
   * without auth shares it between every client).
   * @default the caller's (`authInfo.clientId`, else `sessionId`, else the wrapper's random id)
   */
  readonly namespace?: string | ((extra: Extra) => string);
  /**
   * The tool's name: keys are kept per tool (the same key sent to two tools is two operations),
   * and refusals and events name it. @default "tool" (every wrapper left unnamed shares one)
   */
  readonly toolName?: string;
  /** Longest key accepted; a longer one is refused (`INVALID_ARGUMENTS`), not run. @default 256 */
  readonly maxKeyLength?: number;
}

const DEFAULT_TOOL_NAME = "tool";
const DEFAULT_MAX_KEY_LENGTH = 256;

/**
 * For MCP servers: runs a tool handler once per idempotency key, with the core guard's promises. A
 * request whose `_meta` carries `io.retry-reflect/idempotency-key` (what `@retry-reflect/mcp`'s
 * client adapter sends for a write, the model's key or a derived one) runs the handler the first
 * time and stores the result the client received; the same key with the same arguments from the
 * same caller (a client re-issuing a request whose response was lost) gets that result back, with
 * `_meta["io.retry-reflect/replayed"]: true`, without running the handler. A request without a key
 * runs as before.
 * ```ts
 * const store = new InMemoryIdempotencyStore();
 * server.registerTool("send_email", { inputSchema: { to: z.string(), body: z.string() } },
 *   withIdempotency(async ({ to, body }) => ({ content: [{ type: "text", text: await send(to, body) }] }), { store, toolName: "send_email" }));
 * ```
 * While the handler runs its key's lease is renewed, so a slow handler is never run beside itself;
 * a result larger than `maxResultBytes` is returned, not stored; a result with `isError: true`, or a
 * handler that throws, stores nothing and frees the key, so that a retry runs again. What it answers
 * instead of running, each an `isError` result in the structured error shape: the same key with
 * other arguments `IDEMPOTENCY_KEY_REUSED`; the key still running elsewhere after `waitMs`
 * `IN_PROGRESS` (recoverable); a key whose holder ended without a result, or whose stored record is
 * not a valid result (tampered, corrupted), `WRITE_IN_DOUBT`; a store that fails `STORE_UNAVAILABLE`
 * (recoverable). The handler is the `(args, extra)` form of a tool with an `inputSchema` (give a tool
 * without arguments `inputSchema: {}`). An invalid option throws `InvalidOptionError`, naming it.
 */
export function withIdempotency<Args, Extra extends IdempotencyExtra>(
  handler: (args: Args, extra: Extra) => CallToolResult | Promise<CallToolResult>,
  options: WithIdempotencyOptions<Extra>,
): (args: Args, extra: Extra) => Promise<CallToolResult> {
  if (typeof handler !== "function") throw new InvalidOptionError("handler", handler, "a tool handler function");
  const guard = new RequestGuard(options, { failed: isFailure, replayable: isSuccessfulCallToolResult });
  const { namespace } = options;
  if (namespace !== undefined && typeof namespace !== "function" && (typeof namespace !== "string" || namespace === "")) {
    throw new InvalidOptionError("namespace", namespace, "a non-empty string or a function of the request's extra");
  }
  const toolName = options.toolName ?? DEFAULT_TOOL_NAME;
  if (typeof toolName !== "string" || toolName === "") throw new InvalidOptionError("toolName", toolName, "a non-empty string");
  const maxKeyLength = options.maxKeyLength ?? DEFAULT_MAX_KEY_LENGTH;
  if (!Number.isSafeInteger(maxKeyLength) || maxKeyLength < 1)
    throw new InvalidOptionError("maxKeyLength", maxKeyLength, "an integer >= 1");
  // One process, one client (stdio): the wrapper's own id, never a fixed string shared across processes.
  const ownNamespace = randomScope("mcp-server");

  const namespaceOf = (extra: Extra): string => {
    if (namespace === undefined) return callerOf(extra, ownNamespace);
    if (typeof namespace === "string") return namespace;
    const space: unknown = namespace(extra);
    if (typeof space !== "string" || space === "") {
      throw new InvalidOptionError("namespace", space, "a non-empty string from the namespace function");
    }
    return space;
  };

  return async (args, extra) => {
    const key = extra?._meta?.[IDEMPOTENCY_META_KEY];
    if (key === undefined) return handler(args, extra);
    if (typeof key !== "string" || key === "" || key.length > maxKeyLength) {
      const message = `The idempotency key in _meta["${IDEMPOTENCY_META_KEY}"] must be a non-empty string of at most ${maxKeyLength} characters.`;
      const suggestedAction = "Send the request with a shorter idempotency key, or without one.";
      return refusal(new ToolError({ code: "INVALID_ARGUMENTS", message, recoverable: false, suggestedAction }));
    }
    const request = { toolName, namespace: namespaceOf(extra), key, args, signal: extra?.signal };
    const outcome = await guard.run(request, () => handler(args, extra));
    if (outcome.status === "ran") return outcome.value;
    if (outcome.status === "replayed") return replayed(outcome.value as CallToolResult);
    return refusal(outcome.error);
  };
}

/** The request's caller: its verified client, else its session, else the wrapper's own id. */
function callerOf(extra: IdempotencyExtra | undefined, ownNamespace: string): string {
  const auth = extra?.authInfo;
  const clientId = typeof auth === "object" && auth !== null ? (auth as { clientId?: unknown }).clientId : undefined;
  if (typeof clientId === "string" && clientId !== "") return `client:${clientId}`;
  const sessionId = extra?.sessionId;
  if (typeof sessionId === "string" && sessionId !== "") return `session:${sessionId}`;
  return ownNamespace;
}

/** A result the client is told failed: nothing stored, the key freed. */
function isFailure(result: unknown): boolean {
  return typeof result === "object" && result !== null && (result as { isError?: unknown }).isError === true;
}

/** A refusal as the structured error result (text only: a tool with an `outputSchema` would fail the client's check of `structuredContent`). */
function refusal(error: ToolError): CallToolResult {
  return structuredToolError(error, { structuredContent: false });
}

function replayed(value: CallToolResult): CallToolResult {
  const meta = typeof value._meta === "object" && value._meta !== null ? value._meta : {};
  return { ...value, _meta: { ...meta, [REPLAYED_META_KEY]: true } };
}
