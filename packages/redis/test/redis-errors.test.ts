import { describe, expect, it } from "vitest";
import { RedisTimeoutError, RedisUnavailableError } from "../src/index.js";

// The two client errors are told by a `Symbol.for` brand (core's `hasBrand`), so that an error made
// by another copy of this package (two installs, the CommonJS entry) is still recognised, and
// `isInstance` never throws, whatever it is given.

describe("RedisTimeoutError and RedisUnavailableError", () => {
  it("recognise their own instances and not each other's", () => {
    const timeout = new RedisTimeoutError("EVALSHA", 250);
    const unavailable = new RedisUnavailableError("EVALSHA", "connection closed", { sent: true });
    expect(RedisTimeoutError.isInstance(timeout)).toBe(true);
    expect(RedisUnavailableError.isInstance(unavailable)).toBe(true);
    expect(RedisTimeoutError.isInstance(unavailable)).toBe(false);
    expect(RedisUnavailableError.isInstance(timeout)).toBe(false);
    expect(timeout.message).toBe("Redis EVALSHA got no reply within 250 ms");
    expect(unavailable.sent).toBe(true);
  });

  it("recognise an instance of another copy of the package by its brand", () => {
    const fromAnotherCopy = Object.assign(new Error("Redis EVAL failed: down"), {
      [Symbol.for("retry-reflect.RedisUnavailableError")]: true,
    });
    expect(RedisUnavailableError.isInstance(fromAnotherCopy)).toBe(true);
    expect(RedisTimeoutError.isInstance(fromAnotherCopy)).toBe(false);
  });

  it("answer false, never throw, for anything else", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("trap");
        },
      },
    );
    for (const value of [undefined, null, 0, "RedisTimeoutError", new Error("x"), hostile, { name: "RedisTimeoutError" }]) {
      expect(RedisTimeoutError.isInstance(value)).toBe(false);
      expect(RedisUnavailableError.isInstance(value)).toBe(false);
    }
  });
});
