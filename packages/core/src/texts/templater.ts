import { safeJson } from "../classify/error-signals.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { ToolError } from "../errors/tool-error.js";

// The reflection template (parsed once, rendered per failure) and the structured error JSON that
// follows the text in every `reflect`/`failed` message.

/** Placeholders a reflection template may use. */
export const REFLECTION_PLACEHOLDERS = ["tool_name", "error", "error_code", "attempt", "max_retries", "suggested_action", "args"] as const;

export type ReflectionPlaceholder = (typeof REFLECTION_PLACEHOLDERS)[number];
export type ReflectionValues = Readonly<Record<ReflectionPlaceholder, string>> & Readonly<Record<string, string>>;

/**
 * A parsed template: literal text and placeholders, alternating. Rendering is one pass, each value
 * written as it is given: the engine passes `{error}` and `{suggested_action}` as JSON strings
 * (quoted: they may be a tool's or a server's text), the others bare.
 */
export interface ReflectionTemplate {
  readonly source: string;
  render(values: ReflectionValues): string;
  /** How many times the template holds `{name}`. */
  count(name: string): number;
  /** How many times it shows each value that comes from a failure (counted once, when it is compiled). */
  readonly uses: Uses;
}

/** How often a text shows each value that comes from a failure: what counts against `maxErrorLength`. */
export type Uses = Readonly<Record<"error" | "suggested_action" | "error_code" | "args", number>>;

/** A text that shows no value of the failure (a fixed sentence). */
export const NO_USES: Uses = { error: 0, suggested_action: 0, error_code: 0, args: 0 };
/** The built-in stop texts that quote the error once. */
export const ERROR_ONCE: Uses = { error: 1, suggested_action: 0, error_code: 0, args: 0 };

/**
 * Parses a template once (at `build()`): `{name}` is a placeholder, `{{` and `}}` are literal
 * braces. An unknown placeholder or a lone brace throws, naming the valid placeholders.
 */
export function compileReflectionTemplate(
  source: string,
  option = "reflectionPrompt",
  placeholders: readonly string[] = REFLECTION_PLACEHOLDERS,
): ReflectionTemplate {
  if (typeof source !== "string" || source.trim().length === 0) {
    throw new InvalidOptionError(option, source, "a non-empty template string");
  }
  const literals: string[] = [];
  const names: string[] = [];
  let literal = "";
  let done = 0;
  for (const match of source.matchAll(/\{\{|\}\}|\{([^}]*)\}|[{}]/g)) {
    const [token, name] = match;
    literal += source.slice(done, match.index);
    done = match.index + token.length;
    if (token === "{{" || token === "}}") {
      literal += token.slice(1);
    } else if (name !== undefined && placeholders.includes(name)) {
      literals.push(literal);
      names.push(name);
      literal = "";
    } else {
      const found = name === undefined ? `an unclosed "{" at position ${match.index}` : `unknown placeholder {${name}}`;
      const among = placeholders.map((each) => `{${each}}`).join(", ");
      const expected =
        token === "}"
          ? `a template without a lone "}" (write }} for a literal brace); found one at position ${match.index}`
          : `a template whose placeholders are among ${among} (write {{ and }} for literal braces); found ${found}`;
      throw new InvalidOptionError(option, source, expected);
    }
  }
  literals.push(literal + source.slice(done));
  const count = (name: string) => names.filter((each) => each === name).length;
  return {
    source,
    count,
    uses: { error: count("error"), suggested_action: count("suggested_action"), error_code: count("error_code"), args: count("args") },
    render: (values) => names.reduce((out, name, index) => out + (values[name] ?? "") + (literals[index + 1] ?? ""), literals[0] ?? ""),
  };
}

/**
 * The structured error JSON from its parts, the texts already quoted (the outcome builder has them):
 * `{"error_code","message","recoverable","suggested_action","tool_suggested_action"?,"attempt","max_retries","retry_after_ms"?,"details"?}`,
 * byte for byte what `JSON.stringify` writes of `ToolErrorJSON` with `attempt` and `max_retries`.
 */
export function structuredJsonOf(
  error: ToolError,
  quotedMessage: string,
  quotedAction: string,
  details: string | undefined,
  attempt: number,
  maxRetries: number,
  quotedToolAction?: string,
): string {
  let json = `{"error_code":${JSON.stringify(error.code)},"message":${quotedMessage},"recoverable":${error.recoverable === true},"suggested_action":${quotedAction}`;
  if (quotedToolAction !== undefined) json += `,"tool_suggested_action":${quotedToolAction}`;
  json += `,"attempt":${attempt},"max_retries":${maxRetries}`;
  if (error.retryAfterMs !== undefined) json += `,"retry_after_ms":${JSON.stringify(error.retryAfterMs)}`;
  if (details !== undefined) json += `,"details":${details}`;
  return `${json}}`;
}

/** `details` as JSON (a clean error's are a plain copy; anything else still gives a valid document). */
export function detailsJson(details: Record<string, unknown>): string {
  try {
    return JSON.stringify(details) ?? "{}";
  } catch {
    return safeJson(details); // BigInt or circular details: still a valid document
  }
}
