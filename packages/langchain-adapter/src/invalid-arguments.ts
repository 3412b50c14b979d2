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

function isBag(value: unknown): value is Bag {
  return typeof value === "object" && value !== null;
}

/** Renders a value the way the model wrote it: strings bare, everything else as JSON, capped. */
export function renderValue(value: unknown): string {
  let text: string;
  if (typeof value === "string") text = value;
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > MAX_RENDERED_VALUE ? `${text.slice(0, MAX_RENDERED_VALUE)}…` : text;
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
    const received = at.found ? renderValue(at.value) : undefined;
    const note = typeof raw.message === "string" ? raw.message : undefined;

    if (code === "unrecognized_keys" && Array.isArray(raw.keys)) {
      for (const key of raw.keys) {
        const keyPath = [...path, key];
        problems.push({ field: renderPath(keyPath), expected: "no such field", received: renderValue(valueAt(args, keyPath).value) });
      }
      continue;
    }
    // zod v4 enum/literal: `values`; zod v3 enum: `options`.
    const allowed = Array.isArray(raw.values) ? (raw.values as unknown[]) : Array.isArray(raw.options) ? (raw.options as unknown[]) : undefined;
    if ((code === "invalid_value" || code === "invalid_enum_value") && allowed) {
      problems.push({ field: renderPath(path), expected: `one of ${allowed.map(renderValue).join(", ")}`, allowed, received });
      continue;
    }
    if (code === "invalid_literal" && "expected" in raw) {
      problems.push({ field: renderPath(path), expected: renderValue(raw.expected), allowed: [raw.expected], received });
      continue;
    }
    if (code === "invalid_type" && typeof raw.expected === "string") {
      problems.push({ field: renderPath(path), expected: raw.expected, received });
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
