import { isRecord } from "@retry-reflect/core/adapter/options";

// A Mastra tool may ask for a confirmation inside `execute` (`await context.agent.suspend(payload)`):
// Mastra records the suspension and the tool returns, usually `undefined`; on `resumeGenerate` the
// same call runs again with `resumeData`. Such a call is neither a success nor a failure: nothing
// may be stored for it (a write stored as done would be answered from the store on resume, and
// never run), and nothing counted. The adapter watches the suspend functions of the call's context
// and hands the suspension to the core as control flow (passed through), then back to Mastra.

/** What a suspended call's attempt ended with, passed through the core as control flow: the value the tool returned (Mastra's to read). */
export class ToolSuspension extends Error {
  constructor(readonly value: unknown) {
    super("the tool suspended its call (Mastra's suspend): passed back to Mastra, neither a success nor a failure");
    this.name = "ToolSuspension";
  }
}

/** Where Mastra puts a call's suspend function: `context.agent` (an agent's call), `context.workflow` (a workflow's), or the context itself. */
type SuspendHolder = Record<string, unknown> & { suspend: (...args: unknown[]) => unknown };

function holdersOf(context: unknown): SuspendHolder[] {
  if (!isRecord(context)) return [];
  return [context.agent, context.workflow, context].filter(
    (holder): holder is SuspendHolder => isRecord(holder) && typeof holder.suspend === "function",
  );
}

/**
 * Watches the suspend functions of one attempt's context (Mastra makes the context, and the
 * `agent` / `workflow` objects in it, per call): each is replaced by one that notes the call and
 * calls the original, until {@link SuspendWatch.end}. Undefined when the context has none to watch.
 */
export class SuspendWatch {
  /** Whether the tool called a suspend function during the attempt. */
  suspended = false;
  private readonly originals: Array<readonly [SuspendHolder, SuspendHolder["suspend"]]>;

  private constructor(holders: SuspendHolder[]) {
    this.originals = holders.map((holder) => [holder, holder.suspend] as const);
    for (const [holder, suspend] of this.originals) {
      holder.suspend = (...args: unknown[]): unknown => {
        this.suspended = true;
        return suspend.apply(holder, args);
      };
    }
  }

  static of(context: unknown): SuspendWatch | undefined {
    const holders = holdersOf(context);
    return holders.length === 0 ? undefined : new SuspendWatch(holders);
  }

  /** Gives the context its own suspend functions back. */
  end(): void {
    for (const [holder, suspend] of this.originals) holder.suspend = suspend;
  }
}
