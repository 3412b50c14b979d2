import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError } from "../errors/tool-error.js";
import { INVALID_ARGUMENTS_ACTION } from "../texts/model-texts.js";
import { isRecord } from "./host-options.js";
import { allowedReadBare, cap, readsBare, renderPlainValue, renderTypedValue, renderValue, toJson } from "./render-value.js";

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

type Bag = Record<string, unknown>;

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

type At = { readonly found: boolean; readonly value: unknown };

function valueAt(args: unknown, path: readonly unknown[]): At {
  let current: unknown = args;
  for (const segment of path) {
    if (!isRecord(current) || !(String(segment) in current)) return { found: false, value: undefined };
    current = current[String(segment)];
  }
  return { found: current !== undefined, value: current };
}

/** What was sent, with its type (the type is what is wrong: `received string "123"`); undefined when missing. */
function typed(at: At): string | undefined {
  return at.found ? renderTypedValue(at.value) : undefined;
}

/** A field given that the schema does not have. */
function unknownField(args: unknown, keyPath: readonly unknown[]): ArgumentProblem {
  return { field: renderPath(keyPath), expected: "no such field", received: renderPlainValue(valueAt(args, keyPath).value) };
}

/** A value outside an enum or literal's `allowed` values. */
function notAllowed(path: readonly unknown[], at: At, allowed: readonly unknown[], expected: string): ArgumentProblem {
  return { field: renderPath(path), expected, allowed, received: at.found ? renderAgainstAllowed(at.value, allowed) : undefined };
}

/**
 * Turns zod issues (v3 or v4) into argument problems. `args` are the arguments the model sent:
 * zod v4 does not keep the received value in its issues, so it is read back from them.
 */
export function problemsFromIssues(issues: readonly unknown[], args: unknown): ArgumentProblem[] {
  const problems: ArgumentProblem[] = [];
  for (const raw of issues) {
    if (!isRecord(raw)) continue;
    const path: readonly unknown[] = Array.isArray(raw.path) ? raw.path : [];
    const code = raw.code;
    const at = valueAt(args, path);
    const note = typeof raw.message === "string" ? raw.message : undefined;

    if (code === "unrecognized_keys" && Array.isArray(raw.keys)) {
      for (const key of raw.keys) problems.push(unknownField(args, [...path, key]));
      continue;
    }
    // zod v4 enum/literal: `values`; zod v3 enum: `options`.
    const allowed = [raw.values, raw.options].find(Array.isArray) as unknown[] | undefined;
    if ((code === "invalid_value" || code === "invalid_enum_value") && allowed) {
      problems.push(notAllowed(path, at, allowed, `one of ${renderAllowed(allowed)}`));
    } else if (code === "invalid_literal" && "expected" in raw) {
      problems.push(notAllowed(path, at, [raw.expected], renderAllowed([raw.expected])));
    } else if (code === "invalid_union") {
      // No branch took the value, most often because of its type: show it.
      problems.push({ field: renderPath(path), received: typed(at), note });
    } else if (code === "invalid_type" && typeof raw.expected === "string") {
      problems.push({ field: renderPath(path), expected: raw.expected, received: typed(at) });
    } else {
      problems.push({ field: renderPath(path), received: at.found ? renderPlainValue(at.value) : undefined, note });
    }
  }
  return problems;
}

/** A JSON Pointer (`/items/2/qty`, ajv 8 `instancePath`) or a dotted path (`.items[2].qty`, ajv 6 `dataPath`) as segments. */
function jsonPathOf(error: Bag): unknown[] {
  const pointer = typeof error.instancePath === "string" ? error.instancePath : undefined;
  if (pointer !== undefined) {
    return pointer
      .split("/")
      .slice(1)
      .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
      .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
  }
  const dotted = typeof error.dataPath === "string" ? error.dataPath : "";
  const segments: unknown[] = [];
  for (const match of dotted.matchAll(/\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]/g)) {
    segments.push(match[1] ?? (match[2] !== undefined ? Number(match[2]) : match[3]));
  }
  return segments;
}

/**
 * Turns JSON Schema validation errors (ajv's `{ instancePath | dataPath, keyword, params, message }`,
 * as MCP servers and JSON-Schema tools report them) into argument problems, like `problemsFromIssues`.
 */
export function problemsFromJsonSchemaErrors(errors: readonly unknown[], args: unknown): ArgumentProblem[] {
  const problems: ArgumentProblem[] = [];
  for (const raw of errors) {
    if (!isRecord(raw)) continue;
    const path = jsonPathOf(raw);
    const params = isRecord(raw.params) ? raw.params : {};
    const note = typeof raw.message === "string" ? raw.message : undefined;
    const at = valueAt(args, path);
    switch (raw.keyword) {
      case "required": {
        const missing = params.missingProperty;
        problems.push({ field: renderPath(typeof missing === "string" ? [...path, missing] : path), note: "required" });
        continue;
      }
      case "additionalProperties": {
        const extra = params.additionalProperty;
        problems.push(unknownField(args, typeof extra === "string" ? [...path, extra] : path));
        continue;
      }
      case "enum":
      case "const": {
        const allowed = Array.isArray(params.allowedValues)
          ? (params.allowedValues as unknown[])
          : "allowedValue" in params
            ? [params.allowedValue]
            : undefined;
        if (allowed === undefined) break;
        problems.push(notAllowed(path, at, allowed, `${raw.keyword === "enum" ? "one of " : ""}${renderAllowed(allowed)}`));
        continue;
      }
      case "type": {
        const type = Array.isArray(params.type)
          ? (params.type as unknown[]).join(" or ")
          : typeof params.type === "string"
            ? params.type
            : undefined;
        if (type === undefined) break;
        problems.push({ field: renderPath(path), expected: type, received: typed(at) });
        continue;
      }
      default:
        break;
    }
    problems.push({ field: renderPath(path), received: at.found ? renderPlainValue(at.value) : undefined, note });
  }
  return problems;
}

/** One line per problem: `units: expected one of celsius, fahrenheit; received kelvin`. */
export function describeProblem(problem: ArgumentProblem): string {
  const head =
    problem.expected !== undefined
      ? `${problem.field}: expected ${problem.expected}`
      : `${problem.field}: ${problem.note ?? "invalid value"}`;
  const tail = problem.received === undefined ? "missing" : `received ${problem.received}`;
  return `${head}; ${tail}`;
}

/** Builds the `INVALID_ARGUMENTS` error the model sees: one line per bad field. */
export function invalidArgumentsError(problems: readonly ArgumentProblem[], cause: unknown, fallbackMessage?: string): ToolError {
  const message =
    problems.length > 0 ? problems.map(describeProblem).join("\n") : (fallbackMessage ?? "The arguments do not match the tool's schema.");
  const details =
    problems.length > 0
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
  // Data for the model, never thrown here: made without a stack trace.
  return createToolError({
    code: ErrorCodes.INVALID_ARGUMENTS,
    message,
    recoverable: true,
    suggestedAction: INVALID_ARGUMENTS_ACTION,
    details,
    kind: "invalid_arguments",
    cause,
  });
}
