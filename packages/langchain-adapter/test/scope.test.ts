import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { runIdOfState, scopeKey, threadIdOf } from "../src/scope.js";

describe("scope", () => {
  it("is thread/run", () => {
    expect(scopeKey("t1", "r1")).toBe("t1/r1");
    expect(scopeKey(undefined, "r1")).toBe("no-thread/r1");
    expect(scopeKey(undefined, undefined)).toBe("no-thread/no-run");
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
