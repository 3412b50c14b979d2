import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { runMarkerOfState, scopeKey, threadIdOf } from "../src/scope.js";

const NO_RUN = { message: undefined, id: undefined };

describe("scope", () => {
  it("is thread/run on a thread", () => {
    const message = new HumanMessage({ content: "a", id: "r1" });
    expect(scopeKey("t1", { message, id: "r1" })).toBe("t1/r1");
    expect(scopeKey("t1", NO_RUN)).toBe("t1/no-run");
  });

  it("is one random scope per run without a thread, told by its human message object, not by its id", () => {
    const first = new HumanMessage({ content: "pay", id: "1" });
    const second = new HumanMessage({ content: "pay", id: "1" }); // another user's run, the same id from their database
    const scope = scopeKey(undefined, { message: first, id: "1" });
    expect(scope).toMatch(/^no-thread\/run\/[0-9a-f-]{36}$/);
    expect(scopeKey(undefined, { message: first, id: "1" })).toBe(scope); // every step of the run
    expect(scopeKey(undefined, { message: second, id: "1" })).not.toBe(scope);
  });

  it("is random, never a fixed string, for a call with neither a thread nor a run marker", () => {
    const scopes = new Set(Array.from({ length: 100 }, () => scopeKey(undefined, NO_RUN)));
    expect(scopes.size).toBe(100);
    for (const scope of scopes) expect(scope).toMatch(/^no-thread\/[0-9a-f-]{36}$/);
  });

  it("reads the thread id from configurable", () => {
    expect(threadIdOf({ thread_id: "abc" })).toBe("abc");
    expect(threadIdOf({ thread_id: 7 })).toBe("7");
    expect(threadIdOf(undefined)).toBeUndefined();
  });

  it("takes the run marker from the latest human message", () => {
    const latest = new HumanMessage({ content: "c", id: "h2" });
    const messages = [
      new HumanMessage({ content: "a", id: "h1" }),
      new AIMessage({ content: "b", id: "a1" }),
      latest,
      new AIMessage({ content: "d", id: "a2" }),
    ];
    expect(runMarkerOfState({ messages })).toEqual({ message: latest, id: "h2" });
    expect(runMarkerOfState({ messages: [] })).toEqual(NO_RUN);
    expect(runMarkerOfState(undefined)).toEqual(NO_RUN);
  });
});
