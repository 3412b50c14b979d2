import { randomScope } from "@retry-reflect/core/adapter/options";

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

/** The run a state is in: its latest human message (one per user turn), and that message's id. (LangGraph gives nodes no run id of their own.) */
export interface RunMarker {
  /** The latest human message: the same object at every step of one run, a new one per `invoke` (LangGraph makes it from the input). */
  readonly message: object | undefined;
  /** Its id: LangGraph's message reducer gives every message one (the caller's, when the input has one), and a checkpoint keeps it across a resume. */
  readonly id: string | undefined;
}

const NO_RUN: RunMarker = { message: undefined, id: undefined };

/** The run marker a state carries: its latest human message and that message's id. */
export function runMarkerOfState(state: unknown): RunMarker {
  const messages = typeof state === "object" ? (state as Members)?.messages : undefined;
  if (!Array.isArray(messages)) return NO_RUN;
  for (let index = messages.length - 1; index >= 0; index--) {
    const item: unknown = messages[index];
    const message = typeof item === "object" ? (item as Members) : undefined;
    if (message && messageType(message) === "human") {
      const id = message.id;
      return { message, id: typeof id === "string" && id !== "" ? id : undefined };
    }
  }
  return NO_RUN;
}

/** One random scope per human message object: the scope of a run without a thread. Weak: a finished run's message takes its scope with it. */
const scopesOfRunsWithoutThread = new WeakMap<object, string>();

/**
 * The attempt-tracking scope of one agent run: `thread/run` on a thread (the run's human message
 * id, which a checkpoint keeps across a resume). A run without a thread cannot be resumed, and its
 * message ids may be the caller's own (a database's `"1"`, the same for every user): it is told by
 * its human message object instead, a random scope per run. A call with neither a thread nor a
 * run marker gets a random scope of its own: nothing tells which run it belongs to, and a fixed
 * string would make every such call of every user one run (one budget, one namespace).
 */
export function scopeKey(threadId: string | undefined, run: RunMarker): string {
  if (threadId !== undefined) return `${threadId}/${run.id ?? "no-run"}`;
  if (run.message === undefined) return randomScope("no-thread");
  let scope = scopesOfRunsWithoutThread.get(run.message);
  if (scope === undefined) {
    scope = randomScope("no-thread/run");
    scopesOfRunsWithoutThread.set(run.message, scope);
  }
  return scope;
}
