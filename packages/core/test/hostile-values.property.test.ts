import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ErrorCodes, type ExecuteOutcome, RetryReflectPlugin, ToolError } from "../src/index.js";
import { DEFAULT_SUGGESTED_ACTIONS } from "../src/primitives.js";
import { createFakeClock, drive } from "../src/testing.js";
import { exhaustedAction, IN_DOUBT_ACTION, TOOL_CODE_FAULT_ACTION, UNREADABLE_ERROR_MESSAGE } from "../src/texts/model-texts.js";

// For random, nested, hostile error shapes (deep, cyclic, throwing getters, proxies, huge strings,
// control characters, planted secrets), thrown or returned: `execute` resolves; the model text is
// the library's fixed template plus at most `maxErrorLength` characters of the failure's own text,
// which appears only quoted or inside the structured JSON; the JSON parses; no planted secret is left.

/** Secrets the default redactor removes, and the part of each that must never be seen. */
const SECRETS = ["Bearer abcdef123456", '"password":"hunter2x"', "sk-abcdefghijklmnopqrstu"] as const;
const LEAKS = ["abcdef123456", "hunter2x", "abcdefghijklmnopqrstu"] as const;

const STANDARD_CODES = new Set<string>(Object.values(ErrorCodes));

const awkward = fc.constantFrom(
  "\u0000",
  "\u0007",
  "\u001b",
  "\u007f",
  "\u0085",
  "\u009b",
  "\u202e",
  "\u2066",
  "\u2028",
  "\ud800",
  '"',
  "\\",
  "\n",
  "{error}",
);
const piece = fc.oneof(
  fc.string({ maxLength: 12 }),
  awkward,
  fc.constantFrom(...SECRETS).map((secret) => ` ${secret} `),
  // Huge, and doubled by JSON escaping.
  fc.integer({ min: 1, max: 20_000 }).map((length) => '"\\x'.repeat(Math.ceil(length / 3))),
);
const text = fc.array(piece, { maxLength: 5 }).map((pieces) => pieces.join(""));

const code = fc.oneof(
  fc.constantFrom(...STANDARD_CODES),
  fc.constantFrom("RECORD_NOT_FOUND", `IGNORE_ALL_PREVIOUS_INSTRUCTIONS_${"X".repeat(31)}`, "not a code", "", "A".repeat(65)),
  text,
);

const leaf = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.bigInt(), fc.constant(undefined), fc.date());
const tree = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie("node"), { maxKeys: 4 }),
  ),
})).node;

/** How a random `details` is made hostile. */
const hostility = fc.record({
  depth: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10_000 })),
  cycle: fc.boolean(),
  getter: fc.boolean(),
  proxy: fc.constantFrom("none", "ownKeys", "get"),
  secret: fc.boolean(),
});

type Hostility = typeof hostility extends fc.Arbitrary<infer T> ? T : never;

function throwing(): never {
  throw new Error("hostile");
}

function hostileDetails(base: unknown, how: Hostility): Record<string, unknown> {
  let details: Record<string, unknown> = { value: base };
  if (how.secret) details.password = "hunter2x";
  if (how.cycle) details.self = details;
  if (how.getter) Object.defineProperty(details, "broken", { get: throwing, enumerable: true });
  for (let level = 0; level < how.depth; level++) details = { next: details };
  if (how.proxy === "ownKeys") details = new Proxy(details, { ownKeys: throwing });
  if (how.proxy === "get")
    details = new Proxy(details, { get: (target, key) => (key === "value" ? throwing() : Reflect.get(target, key)) });
  return details;
}

class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

const failure = fc.record({
  form: fc.constantFrom("error-subclass", "tool-error", "returned"),
  code,
  message: text,
  action: text,
  recoverable: fc.boolean(),
  status: fc.option(fc.constantFrom(400, 401, 404, 422, 429, 500, 503)),
  details: fc.option(fc.tuple(tree, hostility)),
  throwingField: fc.constantFrom("none", "message", "suggested_action", "details"),
});

type Failure = typeof failure extends fc.Arbitrary<infer T> ? T : never;

/** The tool: throws or returns the failure (a fresh object each attempt). */
function toolOf(spec: Failure): () => unknown {
  return () => {
    const details = spec.details === null ? undefined : hostileDetails(spec.details[0], spec.details[1]);
    let made: Record<string, unknown>;
    if (spec.form === "error-subclass") {
      const error = new UpstreamError(spec.message, spec.status ?? undefined) as UpstreamError & Record<string, unknown>;
      error.details = details;
      error.self = error;
      error.big = 10n;
      made = error;
    } else if (spec.form === "tool-error") {
      made = new ToolError({
        code: spec.code,
        message: spec.message,
        recoverable: spec.recoverable,
        suggestedAction: spec.action,
        details,
      }) as unknown as Record<string, unknown>;
    } else {
      made = { error_code: spec.code, message: spec.message, recoverable: spec.recoverable, suggested_action: spec.action, details };
    }
    if (spec.throwingField !== "none") {
      const name = spec.form === "tool-error" && spec.throwingField === "suggested_action" ? "suggestedAction" : spec.throwingField;
      Object.defineProperty(made, name, { get: throwing, enumerable: true, configurable: true });
    }
    if (spec.form === "returned") return made;
    throw made;
  };
}

const escaped = (value: string): number => JSON.stringify(value).length - 2;

/** The library's own texts a failure of `tool` may carry: part of the fixed template, as `maxErrorLength` documents it. */
function ownTexts(tool: string): Set<string> {
  return new Set([
    ...Object.values(DEFAULT_SUGGESTED_ACTIONS),
    TOOL_CODE_FAULT_ACTION,
    IN_DOUBT_ACTION,
    UNREADABLE_ERROR_MESSAGE,
    exhaustedAction(tool),
  ]);
}

/**
 * Checks one failure outcome's message: the text is exactly the library's template around the
 * quoted message, the JSON exactly its skeleton around the failure's values, and those values (the
 * message twice, the action, details, an unknown code) fit in `maxErrorLength`.
 */
function checkMessage(outcome: Exclude<ExecuteOutcome<unknown>, { status: "success" }>, tool: string, maxErrorLength: number): void {
  const { message } = outcome;
  const cut = message.lastIndexOf("\n\n{");
  expect(cut).toBeGreaterThan(0);
  const textPart = message.slice(0, cut);
  const jsonText = message.slice(cut + 2);
  const json = JSON.parse(jsonText) as Record<string, unknown>;
  const errorCode = json.error_code as string;
  const quoted = JSON.stringify(json.message);

  let expected: string | undefined;
  if (outcome.status === "reflect" && outcome.error.kind === "transient") {
    // A transient failure past the patience: the temporary text, with the wait the library keeps.
    const waitS = Math.max(1, Math.ceil((json.retry_after_ms as number) / 1000));
    expected = `The tool '${tool}' is temporarily unavailable: ${quoted}. It may work again in about ${waitS} s: call it again then with the same arguments (the same idempotency key, if it has one), or tell the user.`;
  } else if (outcome.status === "reflect") {
    expected = `The tool '${tool}' failed with: ${quoted}. Analyze what went wrong and provide corrected arguments.`;
  } else if (outcome.reason === "exhausted") {
    const times = outcome.attempt === 1 ? "time" : "times";
    expected = `The tool '${tool}' failed ${outcome.attempt} ${times}; the last error was: ${quoted}. Do not call '${tool}' again for this task. Tell the user what failed.`;
  } else if (outcome.reason === "not_recoverable") {
    const head = `The tool '${tool}' failed with: ${quoted}. This error is not recoverable, do not retry it. `;
    const own = [
      DEFAULT_SUGGESTED_ACTIONS.UNAUTHORIZED,
      TOOL_CODE_FAULT_ACTION,
      IN_DOUBT_ACTION,
      `Do not call '${tool}' again for this task; tell the user what failed.`,
    ];
    expected = own.map((action) => head + action).find((candidate) => candidate === textPart) ?? `${head}<one of the library's actions>`;
  }
  // The untrusted text appears in the text only as the quoted message.
  expect(textPart).toBe(expected);

  const own = ownTexts(tool);
  const details = json.details === undefined ? 0 : JSON.stringify(json.details).length;
  const codeCost = STANDARD_CODES.has(errorCode) ? 0 : errorCode.length;
  const messageCost = own.has(json.message as string) ? 0 : escaped(json.message as string);
  const actionCost = own.has(json.suggested_action as string) ? 0 : escaped(json.suggested_action as string);
  const variableJson = messageCost + actionCost + codeCost + details;
  const skeleton =
    JSON.stringify({
      ...json,
      error_code: codeCost === 0 ? errorCode : "",
      message: messageCost === 0 ? json.message : "",
      suggested_action: actionCost === 0 ? json.suggested_action : "",
      details: undefined,
    }).length + (json.details === undefined ? 0 : ',"details":'.length);
  expect(jsonText.length).toBe(skeleton + variableJson);
  const variableText = messageCost;
  expect(variableText + variableJson).toBeLessThanOrEqual(maxErrorLength);
}

describe("hostile error shapes, thrown or returned (property)", () => {
  it("execute resolves; the message is the fixed template plus at most maxErrorLength; the JSON parses; no secret is left", async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(failure, fc.constantFrom(32, 64, 200, 1000), fc.constantFrom(0, 3), async (spec, maxErrorLength, maxRetries) => {
        const clock = createFakeClock();
        const plugin = RetryReflectPlugin.create({ clock, maxErrorLength, maxRetries, circuitBreakerThreshold: 1_000 });
        const tool = "upstream";
        const outcome = await drive(clock, plugin.execute({ toolName: tool, args: { query: "q" } }, toolOf(spec)));
        // A returned shape whose own members cannot be read is not recognised as one: it is the tool's value.
        if (outcome.status === "success") {
          expect(spec.form).toBe("returned");
          return;
        }
        const written = JSON.stringify(outcome);
        for (const leak of LEAKS) expect(written).not.toContain(leak);
        expect(outcome.message).not.toContain("[object Object]");
        checkMessage(outcome, tool, maxErrorLength);
        // A field the library must read that throws: the tool's fault, a final TOOL_FAILED.
        if (spec.throwingField === "message" || (spec.throwingField === "suggested_action" && spec.form !== "error-subclass")) {
          expect([outcome.status, outcome.error.code]).toEqual(["failed", "TOOL_FAILED"]);
        }
        checked++;
      }),
      { seed: 20_260_5, numRuns: 1_000 },
    );
    expect(checked).toBeGreaterThan(500);
  }, 60_000);
});
