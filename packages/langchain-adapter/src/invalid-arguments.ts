import { ErrorCodes, ToolError } from "@retry-reflect/core";

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

/** The suggested action of an `INVALID_ARGUMENTS` error built from schema problems. */
export const INVALID_ARGUMENTS_ACTION = "Correct the fields named in the error and call the tool again with valid arguments.";

type Bag = Record<string, unknown>;

const MAX_RENDERED_VALUE = 120;

/** The start of a typed rendering; a string starting so is shown quoted, not to be read as one. */
const TYPED_PREFIX = /^(?:string|number|bigint|boolean|array|object|symbol|function)\s/;

function isBag(value: unknown): value is Bag {
  return typeof value === "object" && value !== null;
}

function cap(text: string): string {
  return text.length > MAX_RENDERED_VALUE ? `${text.slice(0, MAX_RENDERED_VALUE)}…` : text;
}

function toJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The JSON type of a value, as the model knows them: `string`, `number`, `boolean`, `null`, `array`, `object`. */
function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/**
 * Whether a string can be shown without quotes and still not be taken for something else: it is
 * not empty, has no surrounding or control whitespace, no comma (lists are comma-separated), does
 * not start like a typed rendering (`number 5`), and does not read as JSON (`123`, `true`, `null`,
 * `[1]`, `"x"`).
 */
function readsBare(text: string): boolean {
  if (text === "" || text.trim() !== text || text.includes(",") || /[\u0000-\u001f\u007f]/.test(text)) return false;
  if (TYPED_PREFIX.test(text)) return false;
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
}

/** Renders a value the way the model wrote it: strings bare, everything else as JSON, capped. */
export function renderValue(value: unknown): string {
  return cap(typeof value === "string" ? value : toJson(value));
}

/**
 * Renders a value with its type first, so that the model can tell what it sent:
 * `string "123"`, `number 5`, `boolean true`, `null`, `array [1,2]`, `object {"a":1}`.
 * Strings are JSON-quoted; the value (not the type) is capped like {@link renderValue}.
 */
function renderTypedValue(value: unknown): string {
  const type = typeOf(value);
  if (type === "null" || type === "undefined") return type;
  const text = type === "number" || type === "bigint" || type === "symbol" || type === "function" ? String(value) : toJson(value);
  return `${type} ${cap(text)}`;
}

/**
 * Renders a value whose type the issue does not question (a bound, a format, an unknown key):
 * a string that cannot be misread is shown bare, any other string with its type (`string "30"`,
 * `string ""`), and other values as JSON, which then cannot be mistaken for a string.
 */
function renderPlainValue(value: unknown): string {
  if (typeof value === "string") return readsBare(value) ? cap(value) : renderTypedValue(value);
  return renderValue(value);
}

/** Whether the allowed values of an enum or literal can all be listed bare: they are strings that cannot be misread. */
function allowedReadBare(allowed: readonly unknown[]): boolean {
  return allowed.every((option) => typeof option === "string" && readsBare(option));
}

/** Lists allowed values: bare when they all read bare (`celsius, fahrenheit`), else as JSON (`"1", "2"`, `3`). */
function renderAllowed(allowed: readonly unknown[]): string {
  const bare = allowedReadBare(allowed);
  return allowed.map((option) => (bare ? renderValue(option) : cap(toJson(option)))).join(", ");
}

/**
 * Renders what was sent against an enum or literal: bare when it is a string that cannot be
 * misread and the allowed values are listed bare too (`kelvin`), else with its type
 * (`number 5`, `string "3"`).
 */
function renderAgainstAllowed(value: unknown, allowed: readonly unknown[]): string {
  return typeof value === "string" && readsBare(value) && allowedReadBare(allowed) ? cap(value) : renderTypedValue(value);
}

function renderPath(path: readonly unknown[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? String(segment) : `.${String(segment)}`;
  }
  return out === "" ? "(arguments)" : out;
}

function valueAt(args: unknown, path: readonly unknown[]): { found: boolean; value: unknown } {
  let current: unknown = args;
  for (const segment of path) {
    if (!isBag(current) || !(String(segment) in current)) return { found: false, value: undefined };
    current = current[String(segment)];
  }
  return { found: current !== undefined, value: current };
}

function pathOf(issue: Bag): readonly unknown[] {
  return Array.isArray(issue.path) ? (issue.path as unknown[]) : [];
}

/**
 * Turns zod issues (v3 or v4) into argument problems. `args` are the arguments the model sent:
 * zod v4 does not keep the received value in its issues, so it is read back from them.
 */
export function problemsFromIssues(issues: readonly unknown[], args: unknown): ArgumentProblem[] {
  const problems: ArgumentProblem[] = [];
  for (const raw of issues) {
    if (!isBag(raw)) continue;
    const path = pathOf(raw);
    const code = raw.code;
    const at = valueAt(args, path);
    const received = at.found ? renderPlainValue(at.value) : undefined;
    const note = typeof raw.message === "string" ? raw.message : undefined;

    if (code === "unrecognized_keys" && Array.isArray(raw.keys)) {
      for (const key of raw.keys) {
        const keyPath = [...path, key];
        problems.push({ field: renderPath(keyPath), expected: "no such field", received: renderPlainValue(valueAt(args, keyPath).value) });
      }
      continue;
    }
    // zod v4 enum/literal: `values`; zod v3 enum: `options`.
    const allowed = Array.isArray(raw.values) ? (raw.values as unknown[]) : Array.isArray(raw.options) ? (raw.options as unknown[]) : undefined;
    if ((code === "invalid_value" || code === "invalid_enum_value") && allowed) {
      const shown = at.found ? renderAgainstAllowed(at.value, allowed) : undefined;
      problems.push({ field: renderPath(path), expected: `one of ${renderAllowed(allowed)}`, allowed, received: shown });
      continue;
    }
    if (code === "invalid_literal" && "expected" in raw) {
      const literal = [raw.expected];
      const shown = at.found ? renderAgainstAllowed(at.value, literal) : undefined;
      problems.push({ field: renderPath(path), expected: renderAllowed(literal), allowed: literal, received: shown });
      continue;
    }
    if (code === "invalid_union") {
      // No branch took the value, most often because of its type: show it.
      problems.push({ field: renderPath(path), received: at.found ? renderTypedValue(at.value) : undefined, note });
      continue;
    }
    if (code === "invalid_type" && typeof raw.expected === "string") {
      // The type is what is wrong here, so it is always shown: `received string "123"`.
      problems.push({ field: renderPath(path), expected: raw.expected, received: at.found ? renderTypedValue(at.value) : undefined });
      continue;
    }
    problems.push({ field: renderPath(path), received, note });
  }
  return problems;
}

/** One line per problem: `units: expected one of celsius, fahrenheit; received kelvin`. */
export function describeProblem(problem: ArgumentProblem): string {
  const head = problem.expected !== undefined ? `${problem.field}: expected ${problem.expected}` : `${problem.field}: ${problem.note ?? "invalid value"}`;
  const tail = problem.received === undefined ? "missing" : `received ${problem.received}`;
  return `${head}; ${tail}`;
}

/** Builds the `INVALID_ARGUMENTS` error the model sees: one line per bad field. */
export function invalidArgumentsError(problems: readonly ArgumentProblem[], cause: unknown, fallbackMessage?: string): ToolError {
  const message = problems.length > 0 ? problems.map(describeProblem).join("\n") : (fallbackMessage ?? "The arguments do not match the tool's schema.");
  const details = problems.length > 0
    ? {
        fields: problems.map((problem) => {
          const entry: Record<string, unknown> = { field: problem.field };
          if (problem.allowed !== undefined) entry.allowed = [...problem.allowed];
          else if (problem.expected !== undefined) entry.expected = problem.expected;
          entry.received = problem.received ?? null;
          return entry;
        }),
      }
    : undefined;
  return new ToolError({
    code: ErrorCodes.INVALID_ARGUMENTS,
    message,
    recoverable: true,
    suggestedAction: INVALID_ARGUMENTS_ACTION,
    details,
    kind: "invalid_arguments",
    cause,
  });
}
