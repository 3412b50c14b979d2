import type { RetryReflectEvent } from "@retry-reflect/core/events";
import type { Transcript } from "./transcript.js";

/**
 * The narrator's lines that say in plain words what some of the plugin's log lines mean, printed
 * under them: why a corrected call waits, and what happened to an attempt cut off by its timeout.
 */
export class EventNotes {
  /** Tools whose signal aborted while they ran, not yet narrated. */
  private readonly aborted = new Set<string>();
  /** Tools with an attempt cut off by its timeout in the call now running, with that timeout. */
  private readonly cutOff = new Map<string, number>();
  /** Tools cut off before their signal's abort reached them (over MCP it travels as a message): told when it does. */
  private readonly abortOnItsWay = new Set<string>();

  constructor(private readonly transcript: Transcript) {}

  /** A tool saw its signal abort (it told `ToolHooks.onAbort`). */
  toolAborted(toolName: string): void {
    if (!this.abortOnItsWay.delete(toolName)) this.aborted.add(toolName);
    else this.transcript.note(`(the abort reached ${toolName} a moment later: it stopped and cancelled its request)`);
  }

  /** Called after `event`'s log line. */
  after(event: RetryReflectEvent): void {
    switch (event.type) {
      case "waiting_before_retry":
        // Why the corrected call does not start at once (its span is longer for it).
        this.transcript.note(
          `(the corrected call waits ${event.fields.wait_ms} ms first: the backoff after the failed attempt, counted from that failure)`,
        );
        break;
      case "attempt_timed_out": {
        const { tool_name: tool, attempt, timeout_ms: timeoutMs } = event.fields;
        this.cutOff.set(tool, timeoutMs);
        // The plugin aborts the attempt's signal before it says so: a tool that listens has seen it by now.
        const honoured = this.aborted.delete(tool);
        if (!honoured) this.abortOnItsWay.add(tool);
        this.transcript.note(
          honoured
            ? `(no answer after ${timeoutMs} ms: the plugin cut attempt ${attempt} off and aborted its context.signal; ${tool} stopped and cancelled its request)`
            : `(no answer after ${timeoutMs} ms: the plugin cut attempt ${attempt} off and aborted its context.signal; ${tool} has not stopped yet, but nobody waits for it any more)`,
        );
        break;
      }
      case "retry":
        if (this.cutOff.has(event.toolName) && event.fields.error_code === "TIMEOUT" && event.fields.mode === "in_place") {
          this.transcript.note(
            `(TIMEOUT is transient: the same call runs again in place after the ${event.fields.backoff_ms} ms backoff; the model is not asked)`,
          );
        }
        break;
      case "retry_succeeded": {
        const timeoutMs = this.cutOff.get(event.toolName);
        if (timeoutMs !== undefined) {
          this.transcript.note(
            `(attempt ${event.fields.attempt} answered within ${timeoutMs} ms: its result goes to the model, which never sees the timeout)`,
          );
        }
        this.callEnded(event.toolName);
        break;
      }
      case "retries_exhausted":
        this.callEnded(event.toolName);
        break;
      default:
        break;
    }
  }

  /** The call of `toolName` ended: an abort still on its way is no longer told (a tool that never saw it ignored it). */
  private callEnded(toolName: string): void {
    this.cutOff.delete(toolName);
    this.abortOnItsWay.delete(toolName);
  }
}
