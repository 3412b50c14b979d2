// Reference rows, not contestants: the least a library can do on a path and still keep the
// contract (DESIGN.md), written by hand as one function with no layers, so that a goal set against
// a peer can be read against what the contract itself costs in the same run. Nothing here is
// configurable, observable or safe beyond the one path it stands for: it is a floor, not a design.
//
// What each keeps of the contract on its path:
//   hook (a healthy read tool, the default time limit): the tool's effect read from its metadata, the
//     healthy predicate (no failing row of the tool, its circuit closed), the caller's abort, the
//     attempt watched for its limit (joined to and left from a linked list, as the coarse deadlines
//     do, no timer per call) with a promise the tool or the limit settles, the result check (an error
//     ToolMessage, or text that may hold the structured error shape, is a failure) and the breaker's reset.
//   failure path (a transient error, then a success, backoff 0): each attempt watched as above, the
//     error classified by the library's own `classifyError`, its message cleaned (a memo of cleaned
//     texts, as the plugin's cleaner keeps), a plain error of the structured fields, the failure
//     counted by the breaker and in the tool's row (with the time), the decision (transient, budget
//     left: again in place), the row cleared on the success, and the outcome object.

/** One attempt under watch: the links of the watch list and the settling functions of its promise. */
interface Watched {
  prev: Watched | undefined;
  next: Watched | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** The watch list of attempts in flight (the limit's timer itself is not part of a call's cost). */
class WatchList {
  private first: Watched | undefined = undefined;

  join(watched: Watched): void {
    watched.next = this.first;
    if (this.first !== undefined) this.first.prev = watched;
    this.first = watched;
  }

  leave(watched: Watched): void {
    const { prev, next } = watched;
    if (prev !== undefined) prev.next = next;
    else this.first = next;
    if (next !== undefined) next.prev = prev;
    watched.prev = watched.next = undefined;
  }
}

const unset = (): void => {};

/**
 * Runs `start` as a watched attempt: its promise settles with the tool's (or, past the limit, with a
 * timeout: not reached here). `check` reads a result: an error it throws rejects the attempt. No
 * closure per call but the promise's own: `start` and `check` are made once and get `arg`.
 */
function watchedAttempt<A, T>(list: WatchList, start: (arg: A) => Promise<T>, arg: A, check?: (result: T, arg: A) => void): Promise<T> {
  const watched: Watched = { prev: undefined, next: undefined, resolve: unset, reject: unset };
  const promise = new Promise<T>((resolve, reject) => {
    watched.resolve = resolve as (value: unknown) => void;
    watched.reject = reject;
  });
  list.join(watched);
  start(arg).then(
    (value) => {
      list.leave(watched);
      try {
        check?.(value, arg);
      } catch (error) {
        watched.reject(error);
        return;
      }
      watched.resolve(value);
    },
    (error: unknown) => {
      list.leave(watched);
      watched.reject(error);
    },
  );
  return promise;
}

type HookRequest = {
  readonly toolCall: { readonly name: string };
  readonly tool?: { readonly metadata?: Record<string, unknown> };
  readonly runtime?: { readonly signal?: AbortSignal };
};

/** The hook's least, as a LangChain `wrapToolCall`: see the top of this file. */
export function leastHook(): (request: HookRequest, handler: (request: HookRequest) => Promise<unknown>) => Promise<unknown> {
  // What the healthy predicate reads. Only the healthy path is written, so nothing fills them: they
  // stand for the lookups a library makes on every call.
  const failingRows = new Map<string, number>();
  const openCircuits = new Map<string, number>();
  const list = new WatchList();
  const check = (result: unknown, request: HookRequest): void => {
    // An error ToolMessage, or one whose text may hold the structured error shape (JSON), is read as a failure.
    const message = result as { status?: unknown; content?: unknown } | undefined;
    const content = message?.content;
    if (message?.status === "error" || (typeof content === "string" && content.trimStart().startsWith("{"))) {
      throw new Error("leastHook: only the healthy path is written");
    }
    if (openCircuits.size !== 0) openCircuits.delete(request.toolCall.name);
  };
  return (request, handler) => {
    const toolName = request.toolCall.name;
    const effect = request.tool?.metadata?.effect ?? "read";
    const healthy = effect !== "write" && failingRows.size === 0 && (openCircuits.size === 0 || !openCircuits.has(toolName));
    if (!healthy || request.runtime?.signal?.aborted === true) throw new Error("leastHook: only the healthy path is written");
    return watchedAttempt(list, handler, request, check);
  };
}

interface Classified {
  readonly code: string;
  readonly message: string;
  readonly recoverable: boolean;
  readonly kind: string;
}

/** The failure path's least, around a tool: see the top of this file. `classifyError` is the library's. */
export function leastFailurePath<T>(
  classifyError: (error: unknown) => Classified,
  tool: () => Promise<T>,
  maxRetries = 3,
): () => Promise<{ readonly status: string; readonly attempt: number; readonly value?: T; readonly error?: Classified }> {
  const list = new WatchList();
  const cleaned = new Map<string, string>();
  const breaker = { failures: 0, lastFailureAt: 0 };
  const rows = new Map<string, { failures: number; readyAt: number }>();
  // The (scope, tool) key of the one call this reference stands for.
  const rowKey = "run-1|get_weather";
  const clean = (text: string): string => {
    let known = cleaned.get(text);
    if (known === undefined) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
      known = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
      if (cleaned.size >= 256) cleaned.clear();
      cleaned.set(text, known);
    }
    return known;
  };
  return async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        const value = await watchedAttempt(list, tool, undefined);
        breaker.failures = 0;
        rows.delete(rowKey);
        return { status: "success", attempt, value };
      } catch (thrown) {
        const classified = classifyError(thrown);
        const error: Classified = {
          code: classified.code,
          message: clean(classified.message),
          recoverable: classified.recoverable,
          kind: classified.kind,
        };
        const now = Date.now();
        breaker.failures++;
        breaker.lastFailureAt = now;
        let row = rows.get(rowKey);
        if (row === undefined) {
          row = { failures: 0, readyAt: 0 };
          rows.set(rowKey, row);
        }
        row.failures++;
        row.readyAt = now;
        if (error.kind !== "transient" || attempt > maxRetries) return { status: "failed", attempt, error };
      }
    }
  };
}
