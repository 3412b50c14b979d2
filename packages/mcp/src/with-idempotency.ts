import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type Clock, type IdempotencyStore, systemClock, ToolError } from "@retry-reflect/core";
import { argumentsFingerprint } from "@retry-reflect/core/primitives";
import { structuredToolError } from "./structured-tool-error.js";
import { IDEMPOTENCY_META_KEY } from "./with-retry-reflect.js";

/** The `_meta` key a replayed result carries (`true`): the handler did not run for this request. */
export const REPLAYED_META_KEY = "io.retry-reflect/replayed";

/** What `withIdempotency` reads from an `McpServer` handler's `extra` (the SDK's `RequestHandlerExtra`). */
export interface IdempotencyExtra {
  readonly _meta?: Readonly<Record<string, unknown>>;
  readonly signal?: AbortSignal;
  readonly sessionId?: string;
  readonly authInfo?: unknown;
}

export interface WithIdempotencyOptions<Extra extends IdempotencyExtra = IdempotencyExtra> {
  /** Where results are kept by key: `InMemoryIdempotencyStore` for one server process, `redisStores(...).idempotency` for a fleet. */
  readonly store: IdempotencyStore;
  /**
   * Keeps the keys of one tool, or one tenant, apart: a string, or a function of the request's
   * `extra` (its `authInfo`, say). A key names one operation: two tools that may get the same key
   * need two namespaces (the same key with other arguments is refused as a reuse).
   * @default ""
   */
  readonly namespace?: string | ((extra: Extra) => string);
  /** How long a completed result is kept, in ms. @default 86_400_000 (a day) */
  readonly ttlMs?: number;
  /** How long a running request holds its key before another may take it, in ms. @default 30_000 */
  readonly leaseMs?: number;
  /**
   * How long a request that finds its key running waits for the result (re-reading the store
   * after 50 ms, then twice as long each time, up to 1 s) before it answers `IN_PROGRESS`, in ms.
   * @default 30_000
   */
  readonly waitMs?: number;
  /** Longest key accepted; a longer one is refused (`INVALID_ARGUMENTS`), not run. @default 256 */
  readonly maxKeyLength?: number;
  /** For the waits. @default the system clock */
  readonly clock?: Clock;
}

const DEFAULTS = { ttlMs: 86_400_000, leaseMs: 30_000, waitMs: 30_000, maxKeyLength: 256 } as const;

function check(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`withIdempotency: \`${name}\` must be a finite number > 0, got ${String(value)}`);
  }
  return value;
}

const refuse = (code: string, message: string, recoverable: boolean, suggestedAction: string, retryAfterMs?: number): CallToolResult =>
  structuredToolError(
    new ToolError({ code, message, recoverable, suggestedAction, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) }),
    { structuredContent: false },
  );

/**
 * For MCP servers: runs a tool handler once per idempotency key. A request whose `_meta` carries
 * `io.retry-reflect/idempotency-key` (what `@retry-reflect/mcp`'s client adapter sends for a write,
 * the model's key or a derived one) runs the handler the first time and stores its result; the same
 * key with the same arguments again (a client re-issuing a request whose response was lost, another
 * client process with the same key) gets the stored result back, with
 * `_meta["io.retry-reflect/replayed"]: true`, without running the handler. A request without a key
 * runs as before.
 * ```ts
 * const store = new InMemoryIdempotencyStore();
 * server.registerTool("send_email", { inputSchema: { to: z.string(), body: z.string() } },
 *   withIdempotency(async ({ to, body }) => ({ content: [{ type: "text", text: await send(to, body) }] }), { store, namespace: "send_email" }));
 * ```
 * A result with `isError: true`, or a handler that throws, stores nothing and frees the key, so that
 * a retry runs again. What it answers instead of running: the same key with other arguments
 * (`IDEMPOTENCY_KEY_REUSED`), the key running elsewhere past `waitMs` (`IN_PROGRESS`, recoverable),
 * a key whose holder ended without a result (`WRITE_IN_DOUBT`, from stores that keep such locks),
 * a full store (`OVERLOADED`, recoverable) and a store that fails (`STORE_UNAVAILABLE`,
 * recoverable): each an `isError` result in the structured error shape. The handler is the
 * `(args, extra)` form of a tool with an `inputSchema` (give a tool without arguments `inputSchema: {}`).
 */
export function withIdempotency<Args, Extra extends IdempotencyExtra>(
  handler: (args: Args, extra: Extra) => CallToolResult | Promise<CallToolResult>,
  options: WithIdempotencyOptions<Extra>,
): (args: Args, extra: Extra) => Promise<CallToolResult> {
  const store = options?.store;
  if (store === null || typeof store !== "object" || typeof store.begin !== "function") {
    throw new TypeError(`withIdempotency: \`store\` must be an IdempotencyStore, got ${String(store)}`);
  }
  const namespace = options.namespace ?? "";
  if (typeof namespace !== "string" && typeof namespace !== "function") {
    throw new TypeError(`withIdempotency: \`namespace\` must be a string or a function, got ${String(namespace)}`);
  }
  const ttlMs = check("ttlMs", options.ttlMs, DEFAULTS.ttlMs);
  const leaseMs = check("leaseMs", options.leaseMs, DEFAULTS.leaseMs);
  const waitMs = check("waitMs", options.waitMs, DEFAULTS.waitMs);
  const maxKeyLength = check("maxKeyLength", options.maxKeyLength, DEFAULTS.maxKeyLength);
  const clock = options.clock ?? systemClock;

  return async (args, extra) => {
    const key = extra?._meta?.[IDEMPOTENCY_META_KEY];
    if (key === undefined) return handler(args, extra);
    if (typeof key !== "string" || key === "" || key.length > maxKeyLength) {
      return refuse(
        "INVALID_ARGUMENTS",
        `The idempotency key in _meta["${IDEMPOTENCY_META_KEY}"] must be a non-empty string of at most ${maxKeyLength} characters.`,
        false,
        "Send the request with a shorter idempotency key, or without one.",
      );
    }
    const space = typeof namespace === "function" ? String(namespace(extra)) : namespace;
    const storeKey = `mcp\u0000${space}\u0000${key}`;
    const fingerprint = argumentsFingerprint(args);
    const deadline = clock.now() + waitMs;
    // A waiter re-reads the store at 50 ms, then twice as long each time up to 1 s (the store's own
    // answer is the rest of the holder's lease, too long to wait for a result that comes sooner).
    let poll = 50;
    for (;;) {
      let begun: Awaited<ReturnType<IdempotencyStore["begin"]>>;
      try {
        begun = await store.begin(storeKey, fingerprint, leaseMs);
      } catch {
        return refuse(
          "STORE_UNAVAILABLE",
          "The idempotency store could not be reached; the operation was not performed.",
          true,
          "Call the tool again later with the same arguments and key.",
        );
      }
      switch (begun.status) {
        case "acquired":
          return run(begun.token);
        case "completed":
          if (begun.fingerprint !== fingerprint) return reused();
          return replayed(begun.value as CallToolResult);
        case "in_progress": {
          if (begun.fingerprint !== fingerprint) return reused();
          if (clock.now() >= deadline) {
            return refuse(
              "IN_PROGRESS",
              "The same operation is still running.",
              true,
              "Wait, then call again with the same arguments and key.",
              begun.retryAfterMs,
            );
          }
          // Aborted (the client cancelled the request): the wait rejects with the signal's reason.
          await clock.sleep(Math.max(1, Math.min(begun.retryAfterMs, poll, deadline - clock.now())), extra?.signal);
          poll = Math.min(poll * 2, 1_000);
          continue;
        }
        case "in_doubt":
          return refuse(
            "WRITE_IN_DOUBT",
            "An earlier request with this key ended without a result: the operation may or may not have taken effect.",
            false,
            "Do not call the tool again with this key: tell the user that the outcome is unknown and must be checked.",
          );
        default:
          return refuse(
            "OVERLOADED",
            "The idempotency store is full of running operations; this one was not performed.",
            true,
            "Wait a moment, then call the tool again with the same arguments and key.",
            "retryAfterMs" in begun ? begun.retryAfterMs : undefined,
          );
      }
    }

    async function run(token: string): Promise<CallToolResult> {
      let result: CallToolResult;
      try {
        result = await handler(args, extra);
      } catch (error) {
        await settle(() => store.release(storeKey, token));
        throw error;
      }
      if (result?.isError === true) await settle(() => store.release(storeKey, token));
      else await settle(() => store.complete(storeKey, token, result, ttlMs));
      return result;
    }

    function reused(): CallToolResult {
      return refuse(
        "IDEMPOTENCY_KEY_REUSED",
        "This idempotency key was already used for a request with other arguments.",
        false,
        "For a new operation, call again with a new key; for a retry, use exactly the original arguments.",
      );
    }
  };
}

/** A store's answer to `complete`/`release` never fails the request: the handler's result stands. */
async function settle(operation: () => unknown): Promise<void> {
  try {
    await operation();
  } catch {
    // The result was produced; a store that cannot keep it only loses the replay of it.
  }
}

function replayed(value: CallToolResult): CallToolResult {
  const meta = value !== null && typeof value === "object" && typeof value._meta === "object" && value._meta !== null ? value._meta : {};
  return { ...value, _meta: { ...meta, [REPLAYED_META_KEY]: true } };
}
