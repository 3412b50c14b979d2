import { setFlagsFromString } from "node:v8";
import { describe, expect, it } from "vitest";
import { getToolContext, lendToolContext } from "../src/adapter.js";

// `lendToolContext`: the host's own options object, lent the attempt's signal and context for one
// synchronous call (a host that copies its options first, and knows the object by identity).

/** The object's own keys that hold a value (a key the lending added stays, `undefined`), symbols included. */
const definedEntries = (object: object) =>
  Reflect.ownKeys(object)
    .map((key) => [key, (object as Record<PropertyKey, unknown>)[key]])
    .filter(([, value]) => value !== undefined);

const attempt = (signal?: AbortSignal) => ({ attempt: 2, signal, toolName: "t", callId: "c" });

describe("lendToolContext", () => {
  it("lends the signal and the context to the call, then gives the object back as it was", () => {
    const run = new AbortController().signal;
    const mine = new AbortController().signal;
    const options: Record<string, unknown> = { abortSignal: run, other: 1 };
    const seen = lendToolContext(options, attempt(mine), "abortSignal", (lent) => {
      expect(lent).toBe(options);
      const copy = { ...lent }; // what the host does first
      return { signal: copy.abortSignal, attempt: getToolContext(copy)?.attempt };
    });
    expect(seen).toEqual({ signal: mine, attempt: 2 });
    expect(definedEntries(options)).toEqual([
      ["abortSignal", run],
      ["other", 1],
    ]);
    expect(getToolContext(options)).toBeUndefined();
  });

  it("gives back a signal key the object did not have as undefined, also when the call throws", () => {
    const options: Record<string, unknown> = {};
    expect(() =>
      lendToolContext(options, attempt(new AbortController().signal), "abortSignal", (lent) => {
        expect(lent.abortSignal).toBeInstanceOf(AbortSignal);
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(options.abortSignal).toBeUndefined();
    expect(getToolContext(options)).toBeUndefined();
  });

  it("leaves the host's signal in place when the attempt has none of its own", () => {
    const run = new AbortController().signal;
    const options = { abortSignal: run };
    const seen = lendToolContext(options, attempt(undefined), "abortSignal", (lent) => ({ ...lent }).abortSignal);
    expect(seen).toBe(run);
    expect(options.abortSignal).toBe(run);
  });

  it("gives back a host's context still a fast object, on Node 20 and Node 24 (values assigned back, no delete)", () => {
    // A delete made the object a dictionary on Node 24 (in either order): each delete cost about
    // 0.3 µs there, and a host that reuses its context object (or reads it after the call) pays
    // for a dictionary object on every later read and spread (0.8 µs a call, measured on Node 20).
    setFlagsFromString("--allow-natives-syntax");
    const hasFastProperties = new Function("o", "return %HasFastProperties(o)") as (o: object) => boolean;
    const context: Record<string, unknown> = { runId: "run-1", agent: { toolCallId: "call_1" } };
    expect(hasFastProperties(context)).toBe(true);
    for (let i = 0; i < 3; i++) lendToolContext(context, attempt(new AbortController().signal), "abortSignal", (lent) => ({ ...lent }));
    expect(definedEntries(context)).toEqual([
      ["runId", "run-1"],
      ["agent", { toolCallId: "call_1" }],
    ]);
    expect(getToolContext(context)).toBeUndefined();
    expect(hasFastProperties(context)).toBe(true);
  });
});
