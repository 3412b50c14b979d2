import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_REFLECTION_PROMPT, InvalidOptionError } from "../src/index.js";
import { cleanErrorText, compileReflectionTemplate, defaultRedactor } from "../src/primitives.js";
import { REFLECTION_PLACEHOLDERS, type ReflectionPlaceholder, type ReflectionValues } from "../src/texts/templater.js";

const values = (overrides: Partial<ReflectionValues> = {}): ReflectionValues => ({
  tool_name: "get_weather",
  error: JSON.stringify("Invalid units. Supported: celsius, fahrenheit"),
  error_code: "INVALID_ARGUMENTS",
  attempt: "1",
  max_retries: "3",
  suggested_action: "Correct the arguments named in the error and call the tool again.",
  args: '{"city":"nyc","units":"kelvin"}',
  ...overrides,
});

function compileError(source: string): InvalidOptionError {
  try {
    compileReflectionTemplate(source);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError);
    return error as InvalidOptionError;
  }
  throw new Error(`expected ${JSON.stringify(source)} to be rejected`);
}

describe("compileReflectionTemplate", () => {
  it("counts, once, how many times it shows each value that comes from a failure (what counts against maxErrorLength)", () => {
    expect(compileReflectionTemplate(DEFAULT_REFLECTION_PROMPT).uses).toEqual({ error: 1, suggested_action: 0, error_code: 0, args: 0 });
    const template = compileReflectionTemplate("{error} ({error_code}) {{error}} {args} {error} {suggested_action} {tool_name} {attempt}");
    expect(template.uses).toEqual({ error: 2, suggested_action: 1, error_code: 1, args: 1 });
  });

  it("renders the seed's reflection text exactly with the default prompt", () => {
    const template = compileReflectionTemplate(DEFAULT_REFLECTION_PROMPT);
    expect(template.render(values())).toBe(
      `The tool 'get_weather' failed with: "Invalid units. Supported: celsius, fahrenheit". Analyze what went wrong and provide corrected arguments.`,
    );
  });

  it("keeps the source it was compiled from", () => {
    expect(compileReflectionTemplate(DEFAULT_REFLECTION_PROMPT).source).toBe(DEFAULT_REFLECTION_PROMPT);
  });

  it("substitutes every documented placeholder, each as often as it appears", () => {
    const source = `${REFLECTION_PLACEHOLDERS.map((name) => `${name}={${name}}`).join("; ")} again {tool_name}`;
    expect(compileReflectionTemplate(source).render(values())).toBe(
      'tool_name=get_weather; error="Invalid units. Supported: celsius, fahrenheit"; error_code=INVALID_ARGUMENTS; attempt=1; ' +
        "max_retries=3; suggested_action=Correct the arguments named in the error and call the tool again.; " +
        'args={"city":"nyc","units":"kelvin"} again get_weather',
    );
  });

  it("reads {{ and }} as literal braces, also around a placeholder", () => {
    const template = compileReflectionTemplate('Reply as JSON {{"tool": "{tool_name}"}} and {{{error_code}}}; not {{error}}');
    expect(template.render(values())).toBe('Reply as JSON {"tool": "get_weather"} and {INVALID_ARGUMENTS}; not {error}');
  });

  it("rejects an unknown placeholder, naming the option, the placeholder and the valid ones", () => {
    const error = compileError("The tool {tool} failed: {error}");
    expect(error.option).toBe("reflectionPrompt");
    expect(error.value).toBe("The tool {tool} failed: {error}");
    expect(error.message).toContain("`reflectionPrompt`");
    expect(error.message).toContain("{tool}");
    for (const name of REFLECTION_PLACEHOLDERS) expect(error.message).toContain(`{${name}}`);
  });

  it("rejects placeholders that differ only in case or spacing", () => {
    expect(compileError("{Tool_Name}").message).toContain("{Tool_Name}");
    expect(compileError("{ error }").message).toContain("{ error }");
    expect(compileError("empty {} braces").message).toContain("{}");
  });

  it("rejects an unclosed { and a lone }", () => {
    expect(compileError("The tool {tool_name failed").message).toMatch(/unclosed/);
    expect(compileError("The tool {tool_name} failed }").message).toMatch(/lone "}"/);
    expect(compileError("{").option).toBe("reflectionPrompt");
  });

  it("rejects an empty template and a non-string", () => {
    expect(compileError("").option).toBe("reflectionPrompt");
    expect(compileError("   ").option).toBe("reflectionPrompt");
    expect(() => compileReflectionTemplate(42 as unknown as string)).toThrow(InvalidOptionError);
  });

  it("names the option it is given", () => {
    try {
      compileReflectionTemplate("{nope}", "adapter.prompt");
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidOptionError).option).toBe("adapter.prompt");
    }
  });

  it("never substitutes inside a value: a value holding {error} stays as it is", () => {
    const template = compileReflectionTemplate("{tool_name} failed with {error} ({error_code})");
    const rendered = template.render(values({ tool_name: "evil{error}{{x}}", error: '"{tool_name} {args}"' }));
    expect(rendered).toBe('evil{error}{{x}} failed with "{tool_name} {args}" (INVALID_ARGUMENTS)');
  });
});

type Segment = { readonly kind: "text"; readonly text: string } | { readonly kind: "placeholder"; readonly name: ReflectionPlaceholder };

const placeholderText = fc.constantFrom(...REFLECTION_PLACEHOLDERS.map((name) => `{${name}}`), "{", "}", "{{", "}}");
/** Any text, rich in braces and placeholder look-alikes. */
const trickyText = fc.array(fc.oneof(fc.string({ maxLength: 8 }), placeholderText), { maxLength: 6 }).map((parts) => parts.join(""));

const segment: fc.Arbitrary<Segment> = fc.oneof(
  trickyText.map((text): Segment => ({ kind: "text", text })),
  fc.constantFrom(...REFLECTION_PLACEHOLDERS).map((name): Segment => ({ kind: "placeholder", name })),
);

const renderValues: fc.Arbitrary<ReflectionValues> = fc.record({
  tool_name: trickyText,
  error: trickyText,
  error_code: trickyText,
  attempt: trickyText,
  max_retries: trickyText,
  suggested_action: trickyText,
  args: trickyText,
});

describe("compileReflectionTemplate properties", () => {
  it("renders literals (braces escaped) and values in one pass: output is the plain concatenation", () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 10 }), renderValues, (segments, input) => {
        const source =
          "Prompt: " +
          segments.map((part) => (part.kind === "text" ? part.text.replace(/\{/g, "{{").replace(/\}/g, "}}") : `{${part.name}}`)).join("");
        const expected = `Prompt: ${segments.map((part) => (part.kind === "text" ? part.text : input[part.name])).join("")}`;
        expect(compileReflectionTemplate(source).render(input)).toBe(expected);
      }),
    );
  });
});

describe("cleanErrorText cap (property)", () => {
  it("never returns more than maxLength characters, whatever the text", () => {
    const text = fc.oneof(
      fc.string({ maxLength: 3_000 }),
      fc.string({ unit: "grapheme", maxLength: 500 }),
      fc
        .array(
          fc.oneof(
            fc.string({ maxLength: 40 }),
            fc.constantFrom("\n", "\n    at f (a.js:1:2)\n", "Bearer abcdefgh12345 ", "sk-abcdefgh12345678 ", "?token=abc&"),
          ),
          { maxLength: 200 },
        )
        .map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(text, fc.integer({ min: 32, max: 2_000 }), (input, maxLength) => {
        const cleaned = cleanErrorText(input, { maxLength, redact: defaultRedactor });
        expect(cleaned.length).toBeLessThanOrEqual(maxLength);
      }),
    );
  });

  it("never returns more than maxLength characters even when the redactor makes the text longer", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2_000 }), fc.integer({ min: 32, max: 500 }), (input, maxLength) => {
        const cleaned = cleanErrorText(input, { maxLength, redact: (text) => text.replace(/./g, "[REDACTED]") });
        expect(cleaned.length).toBeLessThanOrEqual(maxLength);
      }),
    );
  });
});
