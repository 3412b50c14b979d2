import { describe, expect, it } from "vitest";
import { readsBare } from "../src/adapter/render-value.js";
import { zodArgumentsError } from "../src/adapter-failures.js";
import { ToolError } from "../src/index.js";
import { seededRandom } from "../src/testing.js";

/** The definition readsBare had: no JSON.parse shortcut, every text parsed (a failed parse throws). */
function readsBareByParsing(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
  if (text === "" || text.trim() !== text || text.includes(",") || /[\u0000-\u001f\u007f]/.test(text)) return false;
  if (/^(?:string|number|bigint|boolean|array|object|symbol|function)\s/.test(text)) return false;
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
}

describe("readsBare (a string the model is shown without quotes)", () => {
  it("tells JSON from words without parsing words: the same answers as parsing every text", () => {
    const texts = [
      "celsius",
      "fahrenheit",
      "nyc",
      "tokyo",
      "true",
      "false",
      "null",
      "tru",
      "nul",
      "falsey",
      "truex",
      "nullish",
      "0",
      "-0",
      "01",
      "1.",
      ".5",
      "1.5",
      "-1.5e3",
      "1E+5",
      "1e-5",
      "1e",
      "+1",
      "--1",
      "0x10",
      "Infinity",
      "NaN",
      "-",
      "1 2",
      "12abc",
      '"quoted"',
      '"unterminated',
      "[1]",
      "[abc",
      "{}",
      '{"a":1}',
      "{a}",
      "[]",
      "a b",
      "ü",
      "日本",
    ];
    const random = seededRandom(42);
    const alphabet = [
      '"',
      "[",
      "]",
      "{",
      "}",
      "-",
      "+",
      ".",
      "e",
      "E",
      "0",
      "1",
      "9",
      "t",
      "r",
      "u",
      "e",
      "f",
      "n",
      "l",
      "a",
      "s",
      "x",
      ":",
      " ",
    ];
    for (let index = 0; index < 5000; index++) {
      const length = 1 + Math.floor(random() * 6);
      let text = "";
      for (let at = 0; at < length; at++) text += alphabet[Math.floor(random() * alphabet.length)];
      texts.push(text);
    }
    for (const text of texts) expect([text, readsBare(text)]).toEqual([text, readsBareByParsing(text)]);
  });

  it("shows a plain word bare and JSON-looking text not bare", () => {
    expect(readsBare("celsius")).toBe(true);
    expect(readsBare("30")).toBe(false);
    expect(readsBare("true")).toBe(false);
    expect(readsBare('"x"')).toBe(false);
    expect(readsBare("number 5")).toBe(false);
  });
});

describe("zodArgumentsError (the INVALID_ARGUMENTS error a host's zod failure becomes)", () => {
  it("names each bad field, keeps what was thrown as its cause, and is made without a stack trace (data for the model)", () => {
    const thrown = Object.assign(new Error("Invalid input"), {
      name: "ZodError",
      issues: [
        { code: "invalid_type", expected: "string", path: ["city"], message: "Expected string, received number" },
        { code: "invalid_value", values: ["c", "f"], path: ["units"], message: "Invalid option" },
      ],
    });
    const error = zodArgumentsError(thrown, { city: 3, units: "k" });
    expect(ToolError.isInstance(error)).toBe(true);
    expect(error?.code).toBe("INVALID_ARGUMENTS");
    expect(error?.message).toContain("city");
    expect(error?.message).toContain("units");
    expect(error?.cause).toBe(thrown);
    expect(error?.stack).toBeUndefined();
    expect(error?.toJSON()).toMatchObject({ error_code: "INVALID_ARGUMENTS", recoverable: true });
  });
});
