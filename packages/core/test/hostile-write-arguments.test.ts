import { describe, expect, it } from "vitest";
import { consoleLogger, type RetryReflectOptions, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// Part 3: hostile arguments never make `execute` reject; a write's are refused as
// INVALID_ARGUMENTS (the write does not run), whoever observes the call.

const throwingKey = () =>
  Object.defineProperty({ to: "a@example.com" }, "idempotency_key", {
    get() {
      throw new Error("a getter that throws");
    },
    enumerable: true,
  });
const trapping = () =>
  new Proxy(
    {},
    {
      get: () => {
        throw new Error("a trap that throws");
      },
      ownKeys: () => {
        throw new Error("a trap that throws");
      },
      getOwnPropertyDescriptor: () => {
        throw new Error("a trap that throws");
      },
      has: () => {
        throw new Error("a trap that throws");
      },
    },
  );
const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};

const observers: Array<[string, RetryReflectOptions["observers"]]> = [
  ["no observer", undefined],
  ["observers that follow calls and events", [{ onCallStart: () => {}, onCallEnd: () => {}, onEvent: () => {} }]],
  ["consoleLogger", [consoleLogger({ write: () => {} })]],
];

describe("hostile write arguments never make execute reject", () => {
  for (const [observed, given] of observers) {
    for (const [name, args] of [
      ["a throwing getter on idempotency_key", throwingKey],
      ["a Proxy whose traps throw", trapping],
      ["a revoked Proxy", revoked],
    ] as const) {
      for (const declaresKey of [undefined, true, false]) {
        it(`${name}, ${observed}, declaresKey ${String(declaresKey)}`, async () => {
          const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), toolEffects: { send_email: "write" }, observers: given });
          let ran = false;
          const outcome = await plugin.execute({ toolName: "send_email", args: args(), declaresKey }, () => {
            ran = true;
            return "sent";
          });
          // Arguments whose key cannot be read are refused; a schema without a key field never reads it.
          if (outcome.status === "success") expect(declaresKey).toBe(false);
          else {
            expect(outcome.status).toBe("reflect");
            expect(outcome.status === "reflect" && outcome.error.code).toBe("INVALID_ARGUMENTS");
            expect(ran).toBe(false);
          }
        });
      }
    }
  }
});
