/** Text styling: ANSI colours on a terminal, plain text everywhere else. */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  magenta(text: string): string;
  cyan(text: string): string;
}

const wrap = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;
const identity = (text: string) => text;

export function createStyle(enabled: boolean): Style {
  if (!enabled) {
    return {
      enabled,
      bold: identity,
      dim: identity,
      red: identity,
      green: identity,
      yellow: identity,
      blue: identity,
      magenta: identity,
      cyan: identity,
    };
  }
  return {
    enabled,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    blue: wrap(34, 39),
    magenta: wrap(35, 39),
    cyan: wrap(36, 39),
  };
}

/**
 * Colours only on a terminal: `NO_COLOR` turns them off, `FORCE_COLOR` (not "0") turns them on,
 * otherwise they follow `stream.isTTY`.
 */
export function colorsWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== "0";
  return stream.isTTY === true;
}

/** Length of `text` as shown, ANSI codes excluded. */
export function visibleLength(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC
  return text.replace(/\u001b\[[0-9;]*m/g, "").length;
}
