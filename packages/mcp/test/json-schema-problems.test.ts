import { createRequire } from "node:module";
import { describeProblem, invalidArgumentsError, problemsFromJsonSchemaErrors } from "@retry-reflect/core/adapter/failures";
import { describe, expect, it } from "vitest";

// `problemsFromJsonSchemaErrors` reads the errors of ajv, the JSON Schema validator the MCP SDK itself
// depends on: the errors below are ajv's own, from the copy the SDK installs (no hand-made shapes).

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };
interface AjvInstance {
  compile(schema: object): Validate;
}
const sdk = createRequire(import.meta.url).resolve("@modelcontextprotocol/sdk/package.json");
const ajvModule = createRequire(sdk)("ajv") as { default?: new (options: object) => AjvInstance };
const Ajv = (ajvModule.default ?? ajvModule) as new (options: object) => AjvInstance;

const schema = {
  type: "object",
  properties: {
    city: { type: "string" },
    units: { enum: ["celsius", "fahrenheit"] },
    days: { type: "integer" },
    mode: { const: "forecast" },
    where: { type: "object", properties: { lat: { type: "number" } }, required: ["lat"] },
  },
  required: ["city"],
  additionalProperties: false,
};

function errorsFor(args: unknown): unknown[] {
  const validate = new Ajv({ allErrors: true }).compile(schema);
  expect(validate(args)).toBe(false);
  return validate.errors ?? [];
}

describe("problemsFromJsonSchemaErrors (ajv's errors, as an MCP server or a JSON Schema tool reports them)", () => {
  it("names each bad field: what it expected and what the model sent", () => {
    const args = { units: "kelvin", days: "three", mode: "now", where: {}, extra: 1 };
    const lines = problemsFromJsonSchemaErrors(errorsFor(args), args).map(describeProblem).sort();
    expect(lines).toEqual(
      [
        "city: required; missing",
        'days: expected integer; received string "three"',
        "extra: expected no such field; received 1",
        "mode: expected forecast; received now",
        "units: expected one of celsius, fahrenheit; received kelvin",
        "where.lat: required; missing",
      ].sort(),
    );
  });

  it("becomes the INVALID_ARGUMENTS error the model reads, with the fields as details", () => {
    const args = { city: "Paris", units: "kelvin" };
    const error = invalidArgumentsError(problemsFromJsonSchemaErrors(errorsFor(args), args), undefined);
    expect(error.code).toBe("INVALID_ARGUMENTS");
    expect(error.recoverable).toBe(true);
    expect(error.message).toBe("units: expected one of celsius, fahrenheit; received kelvin");
    expect(error.details).toEqual({ fields: [{ field: "units", allowed: ["celsius", "fahrenheit"], received: "kelvin" }] });
  });

  it("skips what is not an error object, and keeps ajv's message for a keyword it does not know", () => {
    const validate = new Ajv({}).compile({ type: "object", properties: { name: { type: "string", minLength: 3 } } });
    const args = { name: "ab" };
    expect(validate(args)).toBe(false);
    const problems = problemsFromJsonSchemaErrors([null, "text", 7, ...(validate.errors ?? [])], args);
    expect(problems.map(describeProblem)).toEqual(["name: must NOT have fewer than 3 characters; received ab"]);
  });
});
