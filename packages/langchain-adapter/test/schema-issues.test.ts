import { describeProblem, invalidArgumentsError, problemsFromIssues } from "@retry-reflect/core/adapter/failures";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";

function issuesOf(schema: { safeParse(value: unknown): { success: boolean; error?: { issues: unknown[] } } }, value: unknown): unknown[] {
  const result = schema.safeParse(value);
  if (result.success) throw new Error("expected a parse failure");
  return result.error?.issues ?? [];
}

describe("problemsFromIssues + describeProblem", () => {
  const schema = z.object({ city: z.string(), units: z.enum(["celsius", "fahrenheit"]), days: z.number().int().max(7).optional() });

  it("names an enum field, its allowed values and what was received (zod 4)", () => {
    const args = { city: "nyc", units: "kelvin" };
    expect(problemsFromIssues(issuesOf(schema, args), args).map(describeProblem)).toEqual([
      "units: expected one of celsius, fahrenheit; received kelvin",
    ]);
  });

  it("names every bad field: a missing one, a wrong type, a bound", () => {
    const args = { units: 3, days: 30 };
    expect(problemsFromIssues(issuesOf(schema, args), args).map(describeProblem)).toEqual([
      "city: expected string; missing",
      "units: expected one of celsius, fahrenheit; received number 3",
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
      'items[1].qty: expected number; received string "two"',
      "colour: expected no such field; received red",
    ]);
  });
});

describe("the received value shows its type whenever it matters", () => {
  function linesOf(schema: Parameters<typeof issuesOf>[0], args: unknown): string[] {
    return problemsFromIssues(issuesOf(schema, args), args).map(describeProblem);
  }

  it("a number sent as a string reads as a string, quoted, in the message and in the details", () => {
    const args = { amount: "123" };
    const error = invalidArgumentsError(problemsFromIssues(issuesOf(z.object({ amount: z.number() }), args), args), undefined);
    expect(error.message).toBe('amount: expected number; received string "123"');
    expect(error.toJSON().details).toEqual({ fields: [{ field: "amount", expected: "number", received: 'string "123"' }] });
  });

  it("a boolean sent as a string", () => {
    expect(linesOf(z.object({ confirm: z.boolean() }), { confirm: "true" })).toEqual(['confirm: expected boolean; received string "true"']);
  });

  it("a string sent as a number", () => {
    expect(linesOf(z.object({ note: z.string() }), { note: 5 })).toEqual(["note: expected string; received number 5"]);
  });

  it("an array sent as an object, and an object sent as an array", () => {
    expect(linesOf(z.object({ tags: z.array(z.string()) }), { tags: { a: 1 } })).toEqual(['tags: expected array; received object {"a":1}']);
    expect(linesOf(z.object({ where: z.object({ city: z.string() }) }), { where: [1, 2] })).toEqual([
      "where: expected object; received array [1,2]",
    ]);
  });

  it("null and booleans are named by their type", () => {
    expect(linesOf(z.object({ city: z.string() }), { city: null })).toEqual(["city: expected string; received null"]);
    expect(linesOf(z.object({ city: z.string() }), { city: true })).toEqual(["city: expected string; received boolean true"]);
  });

  it("an enum of strings given a number names the number's type; a string keeps the readable form", () => {
    const units = z.object({ units: z.enum(["celsius", "fahrenheit"]) });
    expect(linesOf(units, { units: 5 })).toEqual(["units: expected one of celsius, fahrenheit; received number 5"]);
    expect(linesOf(units, { units: "kelvin" })).toEqual(["units: expected one of celsius, fahrenheit; received kelvin"]);
    expect(linesOf(units, { units: "" })).toEqual(['units: expected one of celsius, fahrenheit; received string ""']);
    const error = invalidArgumentsError(problemsFromIssues(issuesOf(units, { units: 5 }), { units: 5 }), undefined);
    expect(error.toJSON().details).toEqual({ fields: [{ field: "units", allowed: ["celsius", "fahrenheit"], received: "number 5" }] });
  });

  it("a literal given a value of another type names that type (zod 4 and zod 3)", () => {
    expect(linesOf(z.object({ level: z.literal(3) }), { level: "3" })).toEqual(['level: expected one of 3; received string "3"']);
    expect(linesOf(z3.object({ level: z3.literal(3) }), { level: "3" })).toEqual(['level: expected 3; received string "3"']);
    // zod 3 reports an enum given a non-string as a wrong type, in its own words.
    expect(linesOf(z3.object({ units: z3.enum(["celsius", "fahrenheit"]) }), { units: 5 })).toEqual([
      "units: expected 'celsius' | 'fahrenheit'; received number 5",
    ]);
  });

  it("a string literal that looks like another type is quoted on both sides", () => {
    expect(linesOf(z.object({ version: z.literal("2") }), { version: 2 })).toEqual(['version: expected one of "2"; received number 2']);
    expect(linesOf(z.object({ version: z.enum(["1", "2"]) }), { version: "3" })).toEqual([
      'version: expected one of "1", "2"; received string "3"',
    ]);
  });

  it("a value no branch of a union took names its type", () => {
    expect(linesOf(z.object({ id: z.union([z.number(), z.boolean()]) }), { id: "7" })).toEqual([
      expect.stringMatching(/^id: .*; received string "7"$/),
    ]);
  });

  it("outside type checks, a string is bare only when it cannot be misread", () => {
    const named = z.object({ name: z.string().min(3) });
    expect(linesOf(named, { name: "ab" })).toEqual([expect.stringMatching(/^name: .*3.*; received ab$/)]);
    expect(linesOf(named, { name: "" })).toEqual([expect.stringMatching(/^name: .*; received string ""$/)]);
    expect(linesOf(named, { name: "12" })).toEqual([expect.stringMatching(/^name: .*; received string "12"$/)]);
    expect(linesOf(z.object({ units: z.enum(["celsius", "fahrenheit"]) }), { units: "number 5" })).toEqual([
      'units: expected one of celsius, fahrenheit; received string "number 5"',
    ]);
  });

  it("zod 3 wrong types read the same as zod 4", () => {
    expect(linesOf(z3.object({ amount: z3.number() }), { amount: "123" })).toEqual(['amount: expected number; received string "123"']);
  });

  it("a missing field still reads as missing", () => {
    const args = {};
    const error = invalidArgumentsError(problemsFromIssues(issuesOf(z.object({ amount: z.number() }), args), args), undefined);
    expect(error.message).toBe("amount: expected number; missing");
    expect(error.toJSON().details).toEqual({ fields: [{ field: "amount", expected: "number", received: null }] });
  });

  it("long values stay capped at 120 characters after the type", () => {
    const args = { amount: "9".repeat(500) };
    const [line] = linesOf(z.object({ amount: z.number() }), args);
    expect(line).toBe(`amount: expected number; received string ${JSON.stringify(args.amount).slice(0, 120)}…`);
  });
});

describe("invalidArgumentsError", () => {
  it("is a recoverable INVALID_ARGUMENTS ToolError listing the fields in its details", () => {
    const args = { city: "nyc", units: "kelvin" };
    const error = invalidArgumentsError(
      problemsFromIssues(issuesOf(z.object({ units: z.enum(["celsius", "fahrenheit"]) }), args), args),
      undefined,
    );
    expect(error.toJSON()).toMatchObject({
      error_code: "INVALID_ARGUMENTS",
      message: "units: expected one of celsius, fahrenheit; received kelvin",
      recoverable: true,
      details: { fields: [{ field: "units", allowed: ["celsius", "fahrenheit"], received: "kelvin" }] },
    });
    expect(error.kind).toBe("invalid_arguments");
  });
});
