import type { FieldValue, RetryReflectEvent, RetryReflectObserver } from "./events.js";

export interface ConsoleLoggerOptions {
  /** Where each line goes. @default console.warn for WARN (stderr in Node), console.info for INFO (stdout in Node) */
  readonly write?: (line: string, event: RetryReflectEvent) => void;
  /** The target shown after the level. @default "retry_reflect" */
  readonly target?: string;
}

const BARE = /^[\w.:/@+-]+$/;

function formatValue(key: string, value: FieldValue): string {
  if (typeof value !== "string") return String(value);
  return key === "error" || !BARE.test(value) ? JSON.stringify(value) : value;
}

/** One event in the documented line format: `WARN retry_reflect: tool call failed, retrying tool_name=get_weather attempt=1 ...`. */
export function formatEvent(event: RetryReflectEvent, target = "retry_reflect"): string {
  let line = `${event.level} ${target}: ${event.message}`;
  for (const [key, value] of Object.entries(event.fields as Record<string, FieldValue>)) {
    line += ` ${key}=${formatValue(key, value)}`;
  }
  return line;
}

/**
 * An observer that prints every event as one line in the documented format: WARN lines with
 * `console.warn` (stderr in Node), INFO lines with `console.info` (stdout in Node), or every line to
 * `write` when given.
 */
export function consoleLogger(options: ConsoleLoggerOptions = {}): RetryReflectObserver {
  const target = options.target ?? "retry_reflect";
  const write =
    options.write ??
    ((line: string, event: RetryReflectEvent) => {
      if (event.level === "WARN") console.warn(line);
      else console.info(line);
    });
  return {
    onEvent(event) {
      write(formatEvent(event, target), event);
    },
  };
}
