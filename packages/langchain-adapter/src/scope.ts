/** The state key under which the middleware keeps the id of the current agent run. */
export const RUN_ID_STATE_KEY = "_retryReflectRunId";

type Bag = Record<string, unknown>;

function isBag(value: unknown): value is Bag {
  return typeof value === "object" && value !== null;
}

let fallbackCounter = 0;

/** A new run id: a UUID where `crypto.randomUUID` exists, else a process-unique string. */
export function newRunId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof crypto?.randomUUID === "function") return crypto.randomUUID();
  fallbackCounter += 1;
  return `run-${Date.now().toString(36)}-${fallbackCounter}`;
}

/** The thread id of a LangGraph config (`configurable.thread_id`), if any. */
export function threadIdOf(configurable: unknown): string | undefined {
  if (!isBag(configurable)) return undefined;
  const id = configurable.thread_id;
  return typeof id === "string" || typeof id === "number" ? String(id) : undefined;
}

function messageType(message: unknown): string | undefined {
  if (!isBag(message)) return undefined;
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
 * The run id a state carries: the middleware's own `_retryReflectRunId`, else the id of the
 * latest human message (one per user turn, and kept by the checkpoint across a resume).
 */
export function runIdOfState(state: unknown): string | undefined {
  if (!isBag(state)) return undefined;
  const own = state[RUN_ID_STATE_KEY];
  if (typeof own === "string" && own !== "") return own;
  const messages = state.messages;
  if (!Array.isArray(messages)) return undefined;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message: unknown = messages[index];
    if (messageType(message) === "human") {
      const id = isBag(message) ? message.id : undefined;
      return typeof id === "string" && id !== "" ? id : undefined;
    }
  }
  return undefined;
}

/** `thread/run`: the attempt-tracking scope of one agent run on one thread. */
export function scopeKey(threadId: string | undefined, runId: string | undefined): string {
  return `${threadId ?? "no-thread"}/${runId ?? "no-run"}`;
}
