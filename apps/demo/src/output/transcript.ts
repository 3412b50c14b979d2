import type { Style } from "./style.js";

/** Where output lines go: `console.log` in the CLI, an array in tests. */
export type LineSink = (line: string) => void;

const LABEL_WIDTH = "[Plugin injects]: ".length;

function indentContinuation(text: string, width: number): string {
  return text.split("\n").join(`\n${" ".repeat(width)}`);
}

/** Splits a plugin message into its text and the structured error JSON that follows it. */
export function splitPluginMessage(message: string): { text: string; json: string | undefined } {
  const start = message.lastIndexOf('{"error_code"');
  if (start <= 0) return { text: message.trim(), json: start === 0 ? message : undefined };
  return { text: message.slice(0, start).trim(), json: message.slice(start).trim() };
}

/**
 * Renders a conversation the way the reference transcript shows it: `[User]`, `[Model]` calls, `[Tool Error]`,
 * `[Plugin injects]`, `[Tool Success]`, with the WARN/INFO log lines interleaved.
 */
export class Transcript {
  constructor(
    private readonly sink: LineSink,
    readonly style: Style,
  ) {}

  line(text = ""): void {
    this.sink(text);
  }

  heading(text: string): void {
    const rule = "─".repeat(Math.max(8, 78 - text.length - 4));
    this.sink("");
    this.sink(this.style.bold(this.style.cyan(`── ${text} ${rule}`)));
  }

  /** A narrator's line (what the demo sets up), not part of the conversation. */
  note(text: string): void {
    this.sink(this.style.dim(`   ${text}`));
  }

  user(text: string): void {
    this.labelled(this.style.bold("[User]: "), text);
  }

  modelCalls(calls: readonly { name: string; args: unknown }[], thought?: string): void {
    if (thought) this.labelled(this.style.bold(this.style.blue("[Model]: ")), this.style.dim(thought));
    for (const call of calls) {
      this.labelled(this.style.bold(this.style.blue("[Model]: ")), `*calls ${call.name}(${JSON.stringify(call.args)})*`);
    }
  }

  modelSays(text: string): void {
    this.labelled(this.style.bold(this.style.blue("[Model]: ")), text);
  }

  toolError(text: string): void {
    this.labelled(this.style.bold(this.style.red("[Tool Error]: ")), text);
  }

  toolSuccess(text: string, label = "[Tool Success]: "): void {
    this.labelled(this.style.bold(this.style.green(label)), text);
  }

  pluginInjects(message: string): void {
    const { text, json } = splitPluginMessage(message);
    this.labelled(this.style.bold(this.style.magenta("[Plugin injects]: ")), text);
    if (json) this.sink(`${" ".repeat(LABEL_WIDTH)}${this.style.dim(json)}`);
  }

  /** A WARN/INFO line from the plugin, indented under the conversation. */
  log(line: string, level: "WARN" | "INFO"): void {
    this.sink(`    ${level === "WARN" ? this.style.yellow(line) : this.style.green(line)}`);
  }

  private labelled(label: string, text: string): void {
    this.sink(`${label}${indentContinuation(text, LABEL_WIDTH)}`);
  }
}
