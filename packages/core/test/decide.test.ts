import { describe, expect, it } from "vitest";
import { countsForBreaker, type Decision, decide, type FailureFacts } from "../src/call/decision.js";

const policy = { maxRetries: 3, maxBackoffMs: 30_000 };

/** A transient failure of a read tool, attempt 1, closed circuit: the base every row changes. */
const base: FailureFacts = {
  origin: "tool",
  recoverable: true,
  kind: "transient",
  attempt: 1,
  budgetSpent: false,
  circuitOpenForMs: undefined,
  effect: "read",
  guarded: false,
  backoffMs: 500,
  retryAfterMs: undefined,
};

const table: ReadonlyArray<readonly [name: string, facts: Partial<FailureFacts>, decision: Decision]> = [
  ["transient read: in place after the backoff", {}, { kind: "retry", delayMs: 500 }],
  ["transient idempotent: in place", { effect: "idempotent" }, { kind: "retry", delayMs: 500 }],
  ["transient write behind a key: in place", { effect: "write", guarded: true }, { kind: "retry", delayMs: 500 }],
  [
    "write behind a key cut off by its timeout, maybe still running: reflected, the same call later (its key holds)",
    { effect: "write", guarded: true, stillRunning: true },
    { kind: "reflect", delayMs: 500, text: "retry_later" },
  ],
  [
    "transient write without a key: reflected, outcome unknown",
    { effect: "write" },
    { kind: "reflect", delayMs: 500, text: "unknown_outcome" },
  ],
  ["invalid arguments: reflected", { kind: "invalid_arguments" }, { kind: "reflect", delayMs: 500, text: "reflection" }],
  ["other recoverable failure: reflected", { kind: "other" }, { kind: "reflect", delayMs: 500, text: "reflection" }],
  [
    "invalid arguments of a write without a key: reflected, outcome known",
    { kind: "invalid_arguments", effect: "write" },
    { kind: "reflect", delayMs: 500, text: "reflection" },
  ],
  ["Retry-After above the backoff raises the delay", { retryAfterMs: 2000 }, { kind: "retry", delayMs: 2000 }],
  ["Retry-After below the backoff changes nothing", { retryAfterMs: 100 }, { kind: "retry", delayMs: 500 }],
  ["Retry-After is capped at maxBackoffMs", { retryAfterMs: 120_000 }, { kind: "retry", delayMs: 30_000 }],
  ["not recoverable: stop", { recoverable: false }, { kind: "stop", reason: "not_recoverable" }],
  [
    "not recoverable beats a spent budget",
    { recoverable: false, attempt: 9, budgetSpent: true },
    { kind: "stop", reason: "not_recoverable" },
  ],
  ["the last attempt allowed still retries", { attempt: 3 }, { kind: "retry", delayMs: 500 }],
  ["past maxRetries: exhausted", { attempt: 4 }, { kind: "stop", reason: "exhausted" }],
  ["a budget spent by a parallel call: exhausted", { budgetSpent: true }, { kind: "stop", reason: "exhausted" }],
  ["exhausted beats an open circuit", { attempt: 4, circuitOpenForMs: 60_000 }, { kind: "stop", reason: "exhausted" }],
  [
    "this failure opened the circuit: stop, with the open time",
    { circuitOpenForMs: 60_000 },
    { kind: "stop", reason: "circuit_open", retryAfterMs: 60_000 },
  ],
  [
    "an open circuit stops an invalid-arguments failure too",
    { kind: "invalid_arguments", circuitOpenForMs: 10 },
    { kind: "stop", reason: "circuit_open", retryAfterMs: 10 },
  ],
  [
    "a refusal the arguments can fix (a missing key) is reflected, with no wait",
    { origin: "refusal", kind: "other" },
    { kind: "reflect", delayMs: 0, text: "reflection" },
  ],
  [
    "a refusal of a call that did not run (IN_PROGRESS) asks for the same call after the wait it asks",
    { origin: "refusal", kind: "other", retryAfterMs: 1500, sameCallLater: true },
    { kind: "reflect", delayMs: 1500, text: "retry_later" },
  ],
  [
    "a refusal of a call that did not run, with no wait asked (STORE_UNAVAILABLE): the same call later, no gate wait",
    { origin: "refusal", kind: "other", sameCallLater: true },
    { kind: "reflect", delayMs: 0, text: "retry_later" },
  ],
  [
    "a refusal's wait is capped",
    { origin: "refusal", kind: "other", retryAfterMs: 99_000 },
    { kind: "reflect", delayMs: 30_000, text: "reflection" },
  ],
  [
    "a refusal ignores the circuit",
    { origin: "refusal", kind: "other", circuitOpenForMs: 5 },
    { kind: "reflect", delayMs: 0, text: "reflection" },
  ],
  ["a refusal past maxRetries: exhausted", { origin: "refusal", kind: "other", attempt: 4 }, { kind: "stop", reason: "exhausted" }],
];

describe("decide(facts, policy)", () => {
  for (const [name, facts, decision] of table) {
    it(name, () => {
      expect(decide({ ...base, ...facts }, policy)).toEqual(decision);
    });
  }

  it("maxRetries 0: the first failure is already exhausted", () => {
    expect(decide(base, { maxRetries: 0, maxBackoffMs: 30_000 })).toEqual({ kind: "stop", reason: "exhausted" });
  });
});

describe("countsForBreaker(kind, code, previousCode, countsInvalidArguments)", () => {
  const rows: ReadonlyArray<readonly [name: string, args: Parameters<typeof countsForBreaker>, counts: boolean]> = [
    ["a transient failure counts", ["transient", "TRANSIENT", undefined, false], true],
    ["a tool failure counts", ["other", "TOOL_FAILED", undefined, false], true],
    ["credentials count", ["other", "UNAUTHORIZED", undefined, false], true],
    ["bad arguments do not, by default", ["invalid_arguments", "INVALID_ARGUMENTS", undefined, false], false],
    ["bad arguments do with circuitBreakerCountsInvalidArguments", ["invalid_arguments", "INVALID_ARGUMENTS", undefined, true], true],
    ["a first permission denial in the row does not (one argument was refused)", ["other", "PERMISSION_DENIED", undefined, false], false],
    ["a permission denial after another failure does not", ["other", "PERMISSION_DENIED", "TOOL_FAILED", false], false],
    [
      "a permission denial after a permission denial counts (the tool is refused)",
      ["other", "PERMISSION_DENIED", "PERMISSION_DENIED", false],
      true,
    ],
    ["a permission denial counts as bad arguments do with the option", ["other", "PERMISSION_DENIED", undefined, true], true],
  ];
  for (const [name, args, counts] of rows) {
    it(name, () => {
      expect(countsForBreaker(...args)).toBe(counts);
    });
  }
});
