import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import { describeProblem, invalidArgumentsError, problemsFromIssues } from "./invalid-arguments.js";

function issuesOf(schema: { safeParse(value: unknown): { success: boolean; error?: { issues: unknown[] } } }, value: unknown): unknown[] {
  const result = schema.safeParse(value);
  if (result.success) throw new Error("expected a parse failure");
  return result.error?.issues ?? [];
}

describe("problemsFromIssues + describeProblem", () => {
  const schema = z.object({ city: z.string(), units: z.enum(["celsius", "fahrenheit"]), days: z.number().int().max(7).optional() });

  it("names an enum field, its allowed values and what was received (zod 4)", () => {
    const args = { city: "nyc", units: "kelvin" };
    expect(problemsFromIssues(issuesOf(schema, args), args).map(describeProblem)).toEqual(["units: expected one of celsius, fahrenheit; received kelvin"]);
  });

  it("names every bad field: a missing one, a wrong type, a bound", () => {
    const args = { units: 3, days: 30 };
    expect(problemsFromIssues(issuesOf(schema, args), args).map(describeProblem)).toEqual([
      "city: expected string; missing",
      "units: expected one of celsius, fahrenheit; received 3",
      expect.stringMatching(/^days: .*7.*; received 30$/),
    ]);
  });

  it("handles zod 3 issues the same way", () => {
    const v3 = z3.object({ units: z3.enum(["celsius", "fahrenheit"]), mode: z3.literal("fast") });
    const args = { units: "kelvin", mode: "slow" };
    expect(problemsFromIssues(issuesOf(v3, args), args).map(describeProblem)).toEqual([
      "units: expected one of celsius, fahrenheit; received kelvin",
      "mode: expected fast; received slow",
    ]);
  });

  it("names nested paths and unknown keys", () => {
    const strict = z.strictObject({ items: z.array(z.object({ qty: z.number() })) });
    const args = { items: [{ qty: 1 }, { qty: "two" }], colour: "red" };
    expect(problemsFromIssues(issuesOf(strict, args), args).map(describeProblem)).toEqual([
      "items[1].qty: expected number; received two",
      "colour: expected no such field; received red",
    ]);
  });
});

describe("invalidArgumentsError", () => {
  it("is a recoverable INVALID_ARGUMENTS ToolError listing the fields in its details", () => {
    const args = { city: "nyc", units: "kelvin" };
    const error = invalidArgumentsError(problemsFromIssues(issuesOf(z.object({ units: z.enum(["celsius", "fahrenheit"]) }), args), args), undefined);
    expect(error.toJSON()).toMatchObject({
      error_code: "INVALID_ARGUMENTS",
      message: "units: expected one of celsius, fahrenheit; received kelvin",
      recoverable: true,
      details: { fields: [{ field: "units", allowed: ["celsius", "fahrenheit"], received: "kelvin" }] },
    });
    expect(error.kind).toBe("invalid_arguments");
  });
});
