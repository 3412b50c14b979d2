import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { InvalidOptionError } from "../src/index.js";

const require = createRequire(import.meta.url);
const dist = new URL("../dist/", import.meta.url);

describe("InvalidOptionError", () => {
  it("names the option and the value", () => {
    const error = new InvalidOptionError("maxRetries", -1, "an integer >= 0");
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe("Invalid option `maxRetries`: expected an integer >= 0, received -1");
    expect([error.option, error.value, error.name]).toEqual(["maxRetries", -1, "InvalidOptionError"]);
  });

  it("is recognised by instanceof and isInstance across copies of the package (its brand), and nothing else is", () => {
    const foreign = Object.assign(new TypeError("from another copy"), { [Symbol.for("retry-reflect.InvalidOptionError")]: true });
    expect(foreign instanceof InvalidOptionError).toBe(true);
    expect(InvalidOptionError.isInstance(foreign)).toBe(true);
    for (const other of [new TypeError("x"), null, "InvalidOptionError", { name: "InvalidOptionError" }]) {
      expect(other instanceof InvalidOptionError).toBe(false);
      expect(InvalidOptionError.isInstance(other)).toBe(false);
    }
  });

  // Each CommonJS entry point bundles its own copy of the class (tsup does not split CJS): an error
  // thrown by `@retry-reflect/core/testing` must still be an `InvalidOptionError` of `@retry-reflect/core`.
  it.skipIf(!existsSync(new URL("testing.cjs", dist)))(
    "in the CommonJS build, an error from /testing is an instance of the main entry's class",
    () => {
      const main = require(new URL("index.cjs", dist).pathname) as typeof import("../src/index.js");
      const testing = require(new URL("testing.cjs", dist).pathname) as typeof import("../src/testing.js");
      let thrown: unknown;
      try {
        testing.injectFaults(async () => "ok", { faults: [{ kind: "transient", probability: 2 }] });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(main.InvalidOptionError);
      expect(main.InvalidOptionError.isInstance(thrown)).toBe(true);
    },
  );
});
