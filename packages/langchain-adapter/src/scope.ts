import { randomScope } from "@retry-reflect/core/adapter";

/** What LangGraph hands a hook (a config, a state, a message): an object whose members may be anything, or not an object at all. */
type Members = { readonly [key: string]: unknown } | null | undefined;

/** The thread id of a LangGraph config (`configurable.thread_id`), if any. */
export function threadIdOf(configurable: unknown): string | undefined {
  const id = typeof configurable === "object" ? (configurable as Members)?.thread_id : undefined;
  return typeof id === "string" || typeof id === "number" ? String(id) : undefined;
}

function messageType(message: Members): string | undefined {
  if (message === null || message === undefined) return undefined;
  const getType = message.getType ?? message._getType;
  if (typeof getType === "function") {
    try {
      const type: unknown = getType.call(message);
      return typeof type === "string" ? type : undefined;
    } catch {
      return undefined;
    }
  }
  return typeof message.type === "string" ? message.type : undefined;
}

/**
 * The run marker a state carries: the id of the latest human message. LangGraph's message reducer
 * gives every message an id, so this is one value per user turn, and a checkpoint keeps it across
 * a resume. (LangGraph gives nodes no run id of their own.)
 */
export function runIdOfState(state: unknown): string | undefined {
  const messages = typeof state === "object" ? (state as Members)?.messages : undefined;
  if (!Array.isArray(messages)) return undefined;
  for (let index = messages.length - 1; index >= 0; index--) {
    const item: unknown = messages[index];
    const message = typeof item === "object" ? (item as Members) : undefined;
    if (messageType(message) === "human") {
      const id = message?.id;
      return typeof id === "string" && id !== "" ? id : undefined;
    }
  }
  return undefined;
}

/**
 * `thread/run`: the attempt-tracking scope of one agent run on one thread. A call with neither a
 * thread nor a run marker gets a random scope of its own: nothing tells which run it belongs to,
 * and a fixed string would make every such call of every user one run (one budget, one namespace).
 */
export function scopeKey(threadId: string | undefined, runId: string | undefined): string {
  if (threadId === undefined && runId === undefined) return randomScope("no-thread");
  return `${threadId ?? "no-thread"}/${runId ?? "no-run"}`;
}

/**
 * Whose writes a call's are, by default: the thread (a request retried in a new run of the same
 * thread replays), else the run's own scope.
 */
export function defaultNamespace(threadId: string | undefined, scope: () => string): string {
  return threadId === undefined ? scope() : `thread/${threadId}`;
}
