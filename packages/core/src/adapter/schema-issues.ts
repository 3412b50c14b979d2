import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError } from "../errors/tool-error.js";
import { INVALID_ARGUMENTS_ACTION } from "../texts/model-texts.js";
import { isRecord } from "./host-options.js";
import { renderAgainstAllowed, renderAllowed, renderPlainValue, renderTypedValue } from "./render-value.js";

/** One schema problem, in the form the model reads. */
export interface ArgumentProblem {
  /** Dotted path of the bad field (`units`, `items[2].qty`), or `(arguments)` for the whole object. */
  readonly field: string;
  /** What the schema accepts, when it says so (`one of celsius, fahrenheit`, `string`). */
  readonly expected?: string;
  /** The allowed values of an enum or literal field. */
  readonly allowed?: readonly unknown[];
  /** What the model sent, rendered for the model; undefined when the field is missing. */
  readonly received?: string;
  /** The schema library's own message, when nothing more precise can be said. */
  readonly note?: string;
}

function renderPath(path: readonly unknown[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? String(segment) : `.${String(segment)}`;
  }
  return out === "" ? "(arguments)" : out;
}

/** The value the model sent at `path`; undefined when it is missing. */
function valueAt(args: unknown, path: readonly unknown[]): unknown {
  let current: unknown = args;
  for (const segment of path) {
    if (!isRecord(current) || !(String(segment) in current)) return undefined;
    current = current[String(segment)];
  }
  return current;
}

/** What the model sent at `path`, as `render` shows it; undefined when it is missing. */
function sent(args: unknown, path: readonly unknown[], render: (value: unknown) => string): string | undefined {
  const value = valueAt(args, path);
  return value === undefined ? undefined : render(value);
}

/** A field given that the schema does not have. */
function unknownField(args: unknown, keyPath: readonly unknown[]): ArgumentProblem {
  return { field: renderPath(keyPath), expected: "no such field", received: renderPlainValue(valueAt(args, keyPath)) };
}

/** A value outside an enum or literal's `allowed` values. */
function notAllowed(args: unknown, path: readonly unknown[], allowed: readonly unknown[], expected: string): ArgumentProblem {
  return { field: renderPath(path), expected, allowed, received: sent(args, path, (value) => renderAgainstAllowed(value, allowed)) };
}

/** A problem only the schema library's message describes (a bound, a format): what was sent is shown plain. */
function described(args: unknown, path: readonly unknown[], message: unknown): ArgumentProblem {
  return { field: renderPath(path), received: sent(args, path, renderPlainValue), note: typeof message === "string" ? message : undefined };
}

/**
 * Turns zod issues (v3 or v4) into argument problems. `args` are the arguments the model sent:
 * zod v4 does not keep the received value in its issues, so it is read back from them.
 */
export function problemsFromIssues(issues: readonly unknown[], args: unknown): ArgumentProblem[] {
  return issues.filter(isRecord).flatMap((issue): ArgumentProblem | ArgumentProblem[] => {
    const path: readonly unknown[] = Array.isArray(issue.path) ? issue.path : [];
    const { code } = issue;
    if (code === "unrecognized_keys" && Array.isArray(issue.keys)) return issue.keys.map((key) => unknownField(args, [...path, key]));
    // zod v4 enum/literal: `values`; zod v3 enum: `options`.
    const allowed = [issue.values, issue.options].find(Array.isArray) as unknown[] | undefined;
    if ((code === "invalid_value" || code === "invalid_enum_value") && allowed) {
      return notAllowed(args, path, allowed, `one of ${renderAllowed(allowed)}`);
    }
    if (code === "invalid_literal" && "expected" in issue) return notAllowed(args, path, [issue.expected], renderAllowed([issue.expected]));
    const field = renderPath(path);
    // The type is what is wrong (`received string "123"`); no branch of a union took the value, most often because of its type.
    if (code === "invalid_type" && typeof issue.expected === "string") {
      return { field, expected: issue.expected, received: sent(args, path, renderTypedValue) };
    }
    if (code === "invalid_union") {
      return { field, received: sent(args, path, renderTypedValue), note: typeof issue.message === "string" ? issue.message : undefined };
    }
    return described(args, path, issue.message);
  });
}

/** A JSON Pointer (`/items/2/qty`, ajv 8 `instancePath`) or a dotted path (`.items[2].qty`, ajv 6 `dataPath`) as segments. */
function jsonPathOf(error: Record<string, unknown>): unknown[] {
  const pointer = error.instancePath;
  if (typeof pointer === "string") {
    // `~1` is `/`, `~0` is `~` (RFC 6901); a segment of digits is an index.
    return pointer
      .split("/")
      .slice(1)
      .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment.replace(/~1/g, "/").replace(/~0/g, "~")));
  }
  const dotted = typeof error.dataPath === "string" ? error.dataPath : "";
  return Array.from(
    dotted.matchAll(/\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]/g),
    (match) => match[1] ?? (match[2] !== undefined ? Number(match[2]) : match[3]),
  );
}

/** One JSON Schema validation error (ajv's `{ instancePath | dataPath, keyword, params, message }`) as an argument problem. */
function jsonSchemaProblem(error: Record<string, unknown>, args: unknown): ArgumentProblem {
  const path = jsonPathOf(error);
  const params = isRecord(error.params) ? error.params : {};
  const { keyword } = error;
  if (keyword === "required") {
    const missing = params.missingProperty;
    return { field: renderPath(typeof missing === "string" ? [...path, missing] : path), note: "required" };
  }
  if (keyword === "additionalProperties") {
    const extra = params.additionalProperty;
    return unknownField(args, typeof extra === "string" ? [...path, extra] : path);
  }
  if (keyword === "enum" || keyword === "const") {
    const { allowedValues } = params;
    const allowed = Array.isArray(allowedValues) ? allowedValues : "allowedValue" in params ? [params.allowedValue] : undefined;
    if (allowed !== undefined) return notAllowed(args, path, allowed, `${keyword === "enum" ? "one of " : ""}${renderAllowed(allowed)}`);
  }
  if (keyword === "type") {
    const { type } = params;
    const expected = Array.isArray(type) ? type.join(" or ") : typeof type === "string" ? type : undefined;
    if (expected !== undefined) return { field: renderPath(path), expected, received: sent(args, path, renderTypedValue) };
  }
  return described(args, path, error.message);
}

/**
 * Turns JSON Schema validation errors (ajv's `{ instancePath | dataPath, keyword, params, message }`,
 * as MCP servers and JSON-Schema tools report them) into argument problems, like `problemsFromIssues`.
 */
export function problemsFromJsonSchemaErrors(errors: readonly unknown[], args: unknown): ArgumentProblem[] {
  return errors.filter(isRecord).map((error) => jsonSchemaProblem(error, args));
}

/** One line per problem: `units: expected one of celsius, fahrenheit; received kelvin`. */
export function describeProblem(problem: ArgumentProblem): string {
  const said = problem.expected !== undefined ? `expected ${problem.expected}` : (problem.note ?? "invalid value");
  const sent = problem.received === undefined ? "missing" : `received ${problem.received}`;
  return `${problem.field}: ${said}; ${sent}`;
}

/** Builds the `INVALID_ARGUMENTS` error the model sees: one line per bad field. */
export function invalidArgumentsError(problems: readonly ArgumentProblem[], cause: unknown, fallbackMessage?: string): ToolError {
  const fields = problems.map(({ field, allowed, expected, received }) => ({
    field,
    ...(allowed !== undefined ? { allowed: [...allowed] } : expected !== undefined ? { expected } : {}),
    received: received ?? null,
  }));
  // Data for the model, never thrown here: made without a stack trace.
  return createToolError({
    code: ErrorCodes.INVALID_ARGUMENTS,
    message:
      problems.length > 0 ? problems.map(describeProblem).join("\n") : (fallbackMessage ?? "The arguments do not match the tool's schema."),
    recoverable: true,
    suggestedAction: INVALID_ARGUMENTS_ACTION,
    details: problems.length > 0 ? { fields } : undefined,
    kind: "invalid_arguments",
    cause,
  });
}
