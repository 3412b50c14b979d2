import { describe, expect, it } from "vitest";
import { countsForBreaker, type Decision, decide, type FailureFacts } from "../src/call/decide.js";

const policy = { maxRetries: 3, maxBackoffMs: 4_000, patienceMs: 15_000, giveUpMs: 20_000, waitForRecovery: true };

/** A transient failure of a read tool, the first of its row, at the call's start, closed circuit: the base every row changes. */
const base: FailureFacts = {
  origin: "tool",
  recoverable: true,
  kind: "transient",
  reflections: 0,
  budgetSpent: false,
  circuitOpenForMs: undefined,
  effect: "read",
  guarded: false,
  backoffMs: 500,
  retryAfterMs: undefined,
  inPlaceRetries: 0,
  sinceCallStartMs: 0,
  failingForMs: 0,
  failures: 1,
  succeededElsewhere: false,
};

const table: ReadonlyArray<readonly [name: string, facts: Partial<FailureFacts>, decision: Decision]> = [
  ["transient read: in place after the backoff", {}, { kind: "retry", delayMs: 500 }],
  ["transient idempotent: in place", { effect: "idempotent" }, { kind: "retry", delayMs: 500 }],
  ["transient write behind a key: in place", { effect: "write", guarded: true }, { kind: "retry", delayMs: 500 }],
  [
    "write behind a key cut off by its timeout, maybe still running: the same call later (its key holds)",
    { effect: "write", guarded: true, stillRunning: true },
    { kind: "reflect", delayMs: 500, text: "retry_later" },
  ],
  [
    "transient write without a key: reflected, outcome unknown",
    { effect: "write" },
    { kind: "reflect", delayMs: 500, text: "unknown_outcome" },
  ],
  ["invalid arguments: reflected", { kind: "invalid_arguments", reflections: 1 }, { kind: "reflect", delayMs: 500, text: "reflection" }],
  ["other recoverable failure: reflected", { kind: "other", reflections: 1 }, { kind: "reflect", delayMs: 500, text: "reflection" }],
  [
    "invalid arguments of a write without a key: reflected, outcome known",
    { kind: "invalid_arguments", effect: "write", reflections: 1 },
    { kind: "reflect", delayMs: 500, text: "reflection" },
  ],
  ["Retry-After above the backoff raises the delay", { retryAfterMs: 2000 }, { kind: "retry", delayMs: 2000 }],
  ["Retry-After below the backoff changes nothing", { retryAfterMs: 100 }, { kind: "retry", delayMs: 500 }],
  ["Retry-After is capped at maxBackoffMs", { retryAfterMs: 120_000 }, { kind: "retry", delayMs: 4_000 }],
  ["not recoverable: stop", { recoverable: false }, { kind: "stop", reason: "not_recoverable" }],
  [
    "not recoverable beats a spent budget and the give-up time",
    { recoverable: false, budgetSpent: true, failingForMs: 60_000 },
    { kind: "stop", reason: "not_recoverable" },
  ],
  ["a budget spent by a parallel call (it gave up): exhausted", { budgetSpent: true }, { kind: "stop", reason: "exhausted" }],
  // Patience: in place while the next attempt starts within patienceMs of the call's start.
  [
    "transient, past maxRetries in place, the next attempt within patience: in place",
    { inPlaceRetries: 5, sinceCallStartMs: 10_000, backoffMs: 4_000 },
    { kind: "retry", delayMs: 4_000 },
  ],
  [
    "transient, the next attempt exactly at the patience: in place",
    { inPlaceRetries: 5, sinceCallStartMs: 11_000, backoffMs: 4_000 },
    { kind: "retry", delayMs: 4_000 },
  ],
  [
    "transient, the next attempt past the patience: temporary, the same call after the backoff",
    { inPlaceRetries: 5, sinceCallStartMs: 11_001, backoffMs: 4_000 },
    { kind: "reflect", delayMs: 4_000, text: "retry_later" },
  ],
  [
    "transient past the patience, fewer than maxRetries in place: in place (the floor)",
    { inPlaceRetries: 2, sinceCallStartMs: 30_000, backoffMs: 4_000 },
    { kind: "retry", delayMs: 4_000 },
  ],
  [
    "transient past the patience, maxRetries in place already: temporary",
    { inPlaceRetries: 3, sinceCallStartMs: 30_000, backoffMs: 4_000 },
    { kind: "reflect", delayMs: 4_000, text: "retry_later" },
  ],
  // The give-up time: a definitive stop only once the tool has kept failing that long in the scope.
  [
    "failing for the give-up time, more than maxRetries times: exhausted, whatever the patience",
    { failingForMs: 20_000, failures: 4 },
    { kind: "stop", reason: "exhausted" },
  ],
  [
    "failing for the give-up time but only maxRetries times (attempts cut off at their limits): not yet a stop",
    { failingForMs: 100_000, failures: 3, inPlaceRetries: 2, sinceCallStartMs: 100_000 },
    { kind: "retry", delayMs: 500 },
  ],
  [
    "failing for the give-up time, but the tool succeeded elsewhere meanwhile (overloaded, not down): not a stop",
    { failingForMs: 30_000, failures: 6, inPlaceRetries: 3, sinceCallStartMs: 30_000, succeededElsewhere: true },
    { kind: "reflect", delayMs: 500, text: "retry_later" },
  ],
  ["failing just under the give-up time: in place", { failingForMs: 19_999 }, { kind: "retry", delayMs: 500 }],
  [
    "failing for the give-up time beats the floor",
    { failingForMs: 25_000, inPlaceRetries: 0, failures: 4 },
    { kind: "stop", reason: "exhausted" },
  ],
  [
    "an invalid-arguments failure while failing for the give-up time: exhausted",
    { kind: "invalid_arguments", reflections: 1, failingForMs: 20_000, failures: 4 },
    { kind: "stop", reason: "exhausted" },
  ],
  // The model's corrections: maxRetries of them, then exhausted.
  [
    "the last correction allowed is still reflected",
    { kind: "invalid_arguments", reflections: 3 },
    { kind: "reflect", delayMs: 500, text: "reflection" },
  ],
  ["past maxRetries corrections: exhausted", { kind: "invalid_arguments", reflections: 4 }, { kind: "stop", reason: "exhausted" }],
  [
    "transient failures are not corrections: no exhaustion by count",
    { reflections: 9, inPlaceRetries: 9, sinceCallStartMs: 1_000 },
    { kind: "retry", delayMs: 500 },
  ],
  // An open circuit: waited for within the patience (the next attempt is the probe, or waits for it), else temporary.
  [
    "this failure opened the circuit, due to close within the patience: in place after its open time",
    { circuitOpenForMs: 10_000, sinceCallStartMs: 2_000 },
    { kind: "retry", delayMs: 10_000 },
  ],
  [
    "the circuit's open time past the patience: temporary, the same call after the open time",
    { circuitOpenForMs: 60_000, sinceCallStartMs: 2_000 },
    { kind: "reflect", delayMs: 60_000, text: "retry_later" },
  ],
  [
    "an open circuit is not waited for under the floor",
    { circuitOpenForMs: 60_000, inPlaceRetries: 0 },
    { kind: "reflect", delayMs: 60_000, text: "retry_later" },
  ],
  [
    "an open circuit after an invalid-arguments failure: the same call after the open time",
    { kind: "invalid_arguments", reflections: 1, circuitOpenForMs: 10 },
    { kind: "reflect", delayMs: 10, text: "retry_later" },
  ],
  [
    "a refusal the arguments can fix (a missing key) is reflected, with no wait",
    { origin: "refusal", kind: "other", reflections: 1 },
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
    { origin: "refusal", kind: "other", reflections: 1, retryAfterMs: 99_000 },
    { kind: "reflect", delayMs: 4_000, text: "reflection" },
  ],
  [
    "a refusal ignores the circuit",
    { origin: "refusal", kind: "other", reflections: 1, circuitOpenForMs: 5 },
    { kind: "reflect", delayMs: 0, text: "reflection" },
  ],
  ["a refusal past maxRetries: exhausted", { origin: "refusal", kind: "other", reflections: 4 }, { kind: "stop", reason: "exhausted" }],
];

describe("decide(facts, policy)", () => {
  for (const [name, facts, decision] of table) {
    it(name, () => {
      expect(decide({ ...base, ...facts }, policy)).toEqual(decision);
    });
  }

  it("waitForRecovery false: an open circuit within the patience is not waited for", () => {
    expect(decide({ ...base, circuitOpenForMs: 10_000 }, { ...policy, waitForRecovery: false })).toEqual({
      kind: "reflect",
      delayMs: 10_000,
      text: "retry_later",
    });
  });

  it("maxRetries 0 and no patience: the first transient failure is temporary; the first correction exhausted", () => {
    const none = { ...policy, maxRetries: 0, patienceMs: 0 };
    expect(decide(base, none)).toEqual({ kind: "reflect", delayMs: 500, text: "retry_later" });
    expect(decide({ ...base, kind: "invalid_arguments", reflections: 1 }, none)).toEqual({ kind: "stop", reason: "exhausted" });
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
