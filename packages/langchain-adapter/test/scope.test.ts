import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { runIdOfState, scopeKey, threadIdOf } from "../src/scope.js";

describe("scope", () => {
  it("is thread/run", () => {
    expect(scopeKey("t1", "r1")).toBe("t1/r1");
    expect(scopeKey(undefined, "r1")).toBe("no-thread/r1");
    expect(scopeKey("t1", undefined)).toBe("t1/no-run");
  });

  it("is random, never a fixed string, for a call with neither a thread nor a run marker", () => {
    const scopes = new Set(Array.from({ length: 100 }, () => scopeKey(undefined, undefined)));
    expect(scopes.size).toBe(100);
    for (const scope of scopes) expect(scope).toMatch(/^no-thread\/[0-9a-f-]{36}$/);
  });

  it("reads the thread id from configurable", () => {
    expect(threadIdOf({ thread_id: "abc" })).toBe("abc");
    expect(threadIdOf({ thread_id: 7 })).toBe("7");
    expect(threadIdOf(undefined)).toBeUndefined();
  });

  it("takes the run marker from the latest human message id", () => {
    const messages = [
      new HumanMessage({ content: "a", id: "h1" }),
      new AIMessage({ content: "b", id: "a1" }),
      new HumanMessage({ content: "c", id: "h2" }),
      new AIMessage({ content: "d", id: "a2" }),
    ];
    expect(runIdOfState({ messages })).toBe("h2");
    expect(runIdOfState({ messages: [] })).toBeUndefined();
    expect(runIdOfState(undefined)).toBeUndefined();
  });
});
