// The `--model` path: the same episode against a real chat model over HTTP (here a loopback
// OpenAI-compatible stub, since these machines have no model to call). The services and the
// plugin run on a clock that moves on each sleep without waiting; the HTTP is real.
import type { Clock } from "@retry-reflect/core";
import { seededRandom } from "@retry-reflect/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cell } from "../src/agents/cells.js";
import { CONTESTANTS, INFORMATION } from "../src/agents/contestants.js";
import { runAgentEpisode } from "../src/agents/episode.js";
import { judgeAnswer, realModel } from "../src/agents/real-model.js";
import { makeTask } from "../src/agents/world.js";
import { type OpenAiStub, startOpenAiStub } from "./helpers/openai-stub.js";

let stub: OpenAiStub;
beforeAll(async () => {
  stub = await startOpenAiStub();
});
afterAll(() => stub.close());

/**
 * A clock that does not wait: each sleep moves it on and resolves at once. Its timers (an
 * attempt's time limit) never fire: fired at once they would cut every attempt off, and the HTTP
 * exchanges here are real.
 */
function instantClock(): Clock {
  let now = 0;
  return {
    now: () => now,
    sleep: async (ms) => {
      now += Math.max(0, ms);
    },
    timer: () => () => {},
  };
}

const contestant = (name: string) => {
  const found = [...CONTESTANTS, ...INFORMATION].find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no contestant ${name}`);
  return found;
};
const baseline: Cell = { name: "baseline", description: "no faults" };
const firstCallFails: Cell = {
  name: "first-call-fails",
  description: "503 once",
  faults: { get_weather: [{ kind: "transient", calls: [1] }] },
};

describe("--model: a real chat model", () => {
  it("needs a key or a base URL, and the openai: prefix", async () => {
    await expect(realModel("openai:gpt-4o-mini", {})).rejects.toThrow(/OPENAI_API_KEY/);
    await expect(realModel("gpt-4o-mini", { OPENAI_API_KEY: "k" })).rejects.toThrow(/expected openai:<model name>/);
  });

  it("runs a task through ChatOpenAI over HTTP, and a write sends one email", { timeout: 30_000 }, async () => {
    const model = await realModel("openai:stub", { OPENAI_BASE_URL: stub.baseURL });
    expect(model.label).toBe(`stub via ${stub.baseURL}`);
    const lookup = makeTask(1, "lookup", seededRandom(3));
    const result = await runAgentEpisode(baseline, contestant("no middleware"), lookup, 1, { model, clock: instantClock() });
    expect(result).toMatchObject({ success: true, outcome: "answered", modelCalls: 2, toolExecutions: 1, duplicates: 0 });
    const write = makeTask(2, "write", seededRandom(4));
    const sent = await runAgentEpisode(baseline, contestant("retry-reflect"), write, 2, { model, clock: instantClock() });
    // get_weather, send_email refused for want of a key (IDEMPOTENCY_KEY_REQUIRED), again with one, the answer.
    expect(sent).toMatchObject({ success: true, outcome: "answered", modelCalls: 4, duplicates: 0 });
  });

  it("puts the contestant between the real model and the tools", { timeout: 30_000 }, async () => {
    const model = await realModel("openai:stub", { OPENAI_BASE_URL: stub.baseURL });
    const task = makeTask(3, "lookup", seededRandom(5));
    // Without middleware the 503 goes to the model, which calls again: three model calls.
    const plain = await runAgentEpisode(firstCallFails, contestant("no middleware"), task, 3, { model, clock: instantClock() });
    expect(plain).toMatchObject({ success: true, modelCalls: 3, toolExecutions: 2 });
    // retry-reflect retries in place: the model never sees the failure.
    const before = stub.requests.length;
    const ours = await runAgentEpisode(firstCallFails, contestant("retry-reflect"), task, 3, { model, clock: instantClock() });
    expect(ours).toMatchObject({ success: true, modelCalls: 2, toolExecutions: 2 });
    expect(
      stub.requests
        .slice(before)
        .flat()
        .some((message) => message.role === "tool" && /503/.test(String(message.content))),
    ).toBe(false);
  });

  it("judges a free-text answer by the true temperature, and a plain give-up as one", () => {
    const task = makeTask(4, "lookup", seededRandom(6));
    expect(judgeAnswer(`It is ${task.temperature} °C in town.`, task)).toBe("answered");
    expect(judgeAnswer(`It is 1${task.temperature} °C.`, task)).toBe("wrong-answer");
    expect(judgeAnswer("Sorry, I could not get the weather.", task)).toBe("gave-up");
  });
});
