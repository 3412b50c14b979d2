import { isRecord, randomScope } from "@retry-reflect/core/adapter/options";

// Which `generateText` / `streamText` run a tool call belongs to. The AI SDK gives a tool's `execute`
// no run id; it gives it the messages of the step that made the call (`options.messages`): the run's
// initial messages (the `prompt` string made into a user message, or the `messages` given), then
// the messages the run added itself (the model's `assistant` and `tool` messages). Within a run the
// initial messages are the same objects at every step; a run built per request has new ones. So the
// latest message that is not the run's own (usually the user's turn) tells the run, by identity,
// never by content (two users may send the same text).

/** One run, as its key message tells it: its id (undefined once it cannot be told), and how many of its own messages its latest step had. */
interface RunMark {
  id: string | undefined;
  ownMessages: number;
}

/** The run of each key message (the latest message of a step that is not the run's own). Weak: a finished run's messages take their marks with them. */
const runsByKeyMessage = new WeakMap<object, RunMark>();
/** The run of each step's messages (one array per step, shared by the step's parallel calls); `null` when the step tells none. */
const runsByStep = new WeakMap<readonly unknown[], RunMark | null>();

/**
 * The id of the run whose step sent `messages` (`ai-sdk/run/<uuid>`, random), or undefined when no
 * run can be told: no messages (a tool called by hand), none but the model's and tools', or the very
 * same message objects starting another run (a constant prompt array reused): then neither run can
 * be told from the other, for the rest of their calls.
 */
export function runOfMessages(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return undefined;
  let mark = runsByStep.get(messages);
  if (mark === undefined) {
    mark = runOfStep(messages) ?? null;
    runsByStep.set(messages, mark);
  }
  return mark?.id;
}

/** A step not seen before: a later step of a known run (more of the run's own messages after its key message), or a new run. */
function runOfStep(messages: readonly unknown[]): RunMark | undefined {
  let index = messages.length - 1;
  while (index >= 0 && isRunsOwn(messages[index])) index--;
  const keyMessage: unknown = messages[index];
  if (!isRecord(keyMessage)) return undefined;
  const ownMessages = messages.length - 1 - index;
  const known = runsByKeyMessage.get(keyMessage);
  if (known === undefined) {
    const mark: RunMark = { id: randomScope("ai-sdk/run"), ownMessages };
    runsByKeyMessage.set(keyMessage, mark);
    return mark;
  }
  // A run's steps only grow. A new step with no more of its own messages than one seen is another
  // run started from the same message objects: from here on, neither can be told from the other.
  if (ownMessages > known.ownMessages) known.ownMessages = ownMessages;
  else known.id = undefined;
  return known;
}

/** A message the run adds itself: the model's (`assistant`) or its tools' results (`tool`). */
function isRunsOwn(message: unknown): boolean {
  if (!isRecord(message)) return false;
  const role: unknown = message.role;
  return role === "assistant" || role === "tool";
}
