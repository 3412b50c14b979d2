import { describe, expect, it } from "vitest";
import { effectOf } from "../src/tool-effect.js";

describe("effectOf", () => {
  it("prefers the toolEffects option, then the tool's metadata.effect", () => {
    expect(effectOf("send_email", { metadata: { effect: "write" } }, {})).toBe("write");
    expect(effectOf("send_email", { metadata: { effect: "write" } }, { send_email: "idempotent" })).toBe("idempotent");
    expect(effectOf("send_email", undefined, { send_email: "write" })).toBe("write");
  });

  it("ignores a metadata.effect that is not an effect, leaving the plugin's default", () => {
    expect(effectOf("x", { metadata: { effect: "delete" } }, {})).toBeUndefined();
    expect(effectOf("x", { metadata: {} }, undefined)).toBeUndefined();
    expect(effectOf("x", undefined, undefined)).toBeUndefined();
  });
});
