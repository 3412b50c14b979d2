const TRUNCATION_MARK = "… [truncated]";
/**
 * A stack-frame line: V8 frames are indented (`    at fn (file:1:2)`); an unindented `at ...` line
 * counts only when it ends like a frame (`file:line:col`, `(native)`, `(<anonymous>)`, `(index n)`),
 * so that a message line such as "at least one field is required" is kept. Firefox/Safari
 * frames (`fn@file:line:col`) too.
 */
const STACK_LINE =
  /^(?:[ \t]+at [^\n]*|at [^\n]*(?::\d+:\d+\)?|\((?:native|<anonymous>|index \d+)\))|[^\s@]*@[^\s@]*:\d+:\d+)[ \t\r]*$/gm;

/** Replaces bearer tokens, `sk-...` keys and secret-looking query values with `[REDACTED]`. */
export function defaultRedactor(text: string): string {
  return text
    .replace(/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{6,}/gi, "$1 [REDACTED]")
    .replace(/\b(?:sk|pk|rk)-(?:[A-Za-z0-9_]+-)*[A-Za-z0-9_]{8,}/g, "[REDACTED]")
    .replace(/\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{8,}/g, "[REDACTED]")
    .replace(/\b(gh[pousr]_[A-Za-z0-9]{16,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b/g, "[REDACTED]")
    .replace(
      // A parameter name starts after a non-name character (the lookbehind keeps the scan linear on
      // long hyphenated words) and may carry a prefix: `key=`, `api_key=`, `id_token=`, `x-api-key=`.
      /(?<![A-Za-z0-9_-])((?:[A-Za-z0-9]+[_-])*(?:api[_-]?key|key|token|access[_-]?token|refresh[_-]?token|secret|client[_-]?secret|password|passwd|pwd|signature|sig)=)[^&\s"'<>]+/gi,
      "$1[REDACTED]",
    );
}

/**
 * Turns anything a tool threw or returned into one line-safe text: strings as they are, errors by
 * their message, other values as JSON (circular references and BigInts handled), never throwing.
 */
export function errorMessageOf(error: unknown): string {
  if (typeof error === "string") return error;
  if (error === undefined) return "the tool failed without an error message (undefined)";
  if (error === null) return "the tool failed without an error message (null)";
  if (typeof error === "object") {
    const message = readMessage(error);
    if (message !== undefined) return message;
    return safeJson(error);
  }
  if (typeof error === "function") return `the tool failed with a function (${error.name || "anonymous"})`;
  return String(error);
}

function readMessage(error: object): string | undefined {
  try {
    const { message, name } = error as { message?: unknown; name?: unknown };
    if (typeof message === "string" && message.length > 0) return message;
    if (error instanceof Error) return typeof name === "string" && name ? name : "Error";
    const content = (error as { content?: unknown }).content;
    if (Array.isArray(content)) {
      const texts = content
        .map((part: unknown) => (typeof part === "object" && part !== null ? (part as { text?: unknown }).text : undefined))
        .filter((text): text is string => typeof text === "string");
      if (texts.length > 0) return texts.join("\n");
    }
    if (typeof content === "string" && content.length > 0) return content;
  } catch {
    // A getter that throws: fall through to JSON.
  }
  return undefined;
}

/** JSON that never throws: BigInts as strings, circular references as "[Circular]". */
export function safeJson(value: object): string {
  const seen = new WeakSet<object>();
  try {
    const json = JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === "bigint") return item.toString();
      if (typeof item === "object" && item !== null) {
        if (seen.has(item)) return "[Circular]";
        seen.add(item);
      }
      return item;
    });
    return json === undefined ? typeTag(value) : json;
  } catch {
    return typeTag(value);
  }
}

function typeTag(value: object): string {
  try {
    return Object.prototype.toString.call(value);
  } catch {
    // A proxy whose traps throw (even on Symbol.toStringTag).
    return "[object Object]";
  }
}

export interface CleanOptions {
  /** Longest result, the truncation mark included. */
  readonly maxLength: number;
  readonly redact: (text: string) => string;
}

/**
 * What reaches the model and the logs: no stack-trace lines, secrets redacted, at most
 * `maxLength` characters (a cut text ends with "… [truncated]"). Bounded work even on a 10 MB input.
 */
export function cleanErrorText(text: string, options: CleanOptions): string {
  // Work on a bounded prefix: redaction and stack stripping never see more than a few times the cap.
  const window = options.maxLength * 4 + 256;
  const wasLong = text.length > window;
  let cleaned = wasLong ? text.slice(0, window) : text;
  cleaned = cleaned.replace(STACK_LINE, "").replace(/\n{2,}/g, "\n").trim();
  cleaned = safeRedact(cleaned, options.redact);
  if (!wasLong && cleaned.length <= options.maxLength) return cleaned;
  return cleaned.slice(0, Math.max(0, options.maxLength - TRUNCATION_MARK.length)) + TRUNCATION_MARK;
}

function safeRedact(text: string, redact: (text: string) => string): string {
  try {
    const result = redact(text);
    return typeof result === "string" ? result : defaultRedactor(text);
  } catch {
    return defaultRedactor(text);
  }
}

export { TRUNCATION_MARK };
