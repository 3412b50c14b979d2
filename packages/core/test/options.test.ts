import { describe, expect, it } from "vitest";
import { type ResolvedOptions, type ResolvedPolicy, resolveOptions } from "../src/config/resolve.js";
import type { RetryReflectObserver } from "../src/events.js";
import {
  DEFAULT_REFLECTION_PROMPT,
  InMemoryIdempotencyStore,
  InvalidOptionError,
  type RetryReflectOptions,
  RetryReflectPlugin,
  systemClock,
} from "../src/index.js";
import { defaultRedactor } from "../src/primitives.js";
import type { IdempotencyStore } from "../src/stores.js";
import { createFakeClock } from "../src/testing.js";

/** The InvalidOptionError that `run` throws (fails the test when it throws nothing or something else). */
function invalidOption(run: () => unknown): InvalidOptionError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError);
    return error as InvalidOptionError;
  }
  throw new Error("expected an InvalidOptionError, nothing was thrown");
}

/** Options as comparable data: the compiled template and the per-plugin default store left out. */
// Compiled templates are closures: compared by their source.
function comparablePolicy(policy: ResolvedPolicy) {
  const { template, retryLaterTemplate, exhaustedTemplate, notRecoverableTemplate, circuitOpenTemplate, ...rest } = policy;
  return {
    ...rest,
    templates: [template, retryLaterTemplate, exhaustedTemplate, notRecoverableTemplate, circuitOpenTemplate].map(
      (compiled) => compiled?.source,
    ),
  };
}

function comparable(options: ResolvedOptions) {
  const { idempotency, policy, tools, ...rest } = options;
  const { store, ...idempotencyRest } = idempotency;
  return {
    ...comparablePolicy({ ...rest, idempotency } as ResolvedPolicy),
    policy: comparablePolicy(policy),
    tools: [...tools].map(([name, toolPolicy]) => [name, comparablePolicy(toolPolicy)]),
    idempotency: idempotencyRest,
    storeType: store.constructor.name,
  };
}

describe("defaults", () => {
  it("are the documented ones", () => {
    const options = resolveOptions();
    expect(options.maxRetries).toBe(3);
    expect(options.initialBackoffMs).toBe(500);
    expect(options.backoffMultiplier).toBe(2);
    expect(options.maxBackoffMs).toBe(4_000);
    expect(options.circuitBreakerThreshold).toBe(10);
    expect(options.circuitBreakerResetMs).toBe(1_000);
    expect(options.circuitBreakerCountsInvalidArguments).toBe(false);
    expect(options.circuitBreakerKey).toBeUndefined();
    expect(options.maxCircuitBreakers).toBe(10_000);
    expect(options.reflectionPrompt).toBe(
      "The tool '{tool_name}' failed with: {error}. Analyze what went wrong and provide corrected arguments.",
    );
    expect(options.template.source).toBe(DEFAULT_REFLECTION_PROMPT);
    expect([...options.includeTools]).toEqual([]);
    expect([...options.excludeTools]).toEqual([]);
    expect(options.jitter).toBe("none");
    expect({ ...options.toolEffects }).toEqual({});
    expect(options.defaultEffect).toBe("read");
    expect(options.trackingScope).toBe("scope");
    expect(options.maxAttemptCounters).toBe(10_000);
    expect(options.onExhausted).toBe("return");
    expect(options.maxErrorLength).toBe(1000);
    expect(options.redact).toBe(defaultRedactor);
    expect(options.observers).toEqual([]);
    expect(options.clock).toBe(systemClock);
    expect(options.random).toBe(Math.random);
    expect(options.classifyError).toBeUndefined();
    expect(options.idempotency.keyField).toBe("idempotency_key");
    expect(options.idempotency.ttlMs).toBe(86_400_000);
    expect(options.idempotency.leaseMs).toBe(30_000);
    expect(options.idempotency.requireKey).toBe(true);
    expect(options.idempotency.key).toBeUndefined();
    expect(options.idempotency.store).toBeInstanceOf(InMemoryIdempotencyStore);
    // Agents finish when tools come back (DESIGN Part 4): patience, the give-up time, waiting for
    // recovery, a growing attempt limit and a retry budget, on by default.
    expect(options.attemptTimeoutsMs).toEqual([10_000, 30_000, 60_000]);
    expect(options.defaultLimit).toBe(true);
    expect(options.patienceMs).toBe(15_000);
    expect(options.giveUpMs).toBe(20_000);
    expect(options.waitForRecovery).toBe(true);
    expect(options.exhaustedResetMs).toBe(60_000);
    expect(options.retryBudget).toEqual({ ratio: 0.05, minPerSecond: 1, windowMs: 10_000 });
    // The breaker's threshold sits above the attempts one patient call makes (0, 0.5, 1.5, 3.5, 7.5, 11.5 s: six).
    expect(options.circuitBreakerThreshold).toBeGreaterThan(6);
    // The plugin's policy is the same.
    expect(options.policy).toMatchObject({ patienceMs: 15_000, giveUpMs: 20_000, waitForRecovery: true, maxBackoffMs: 4_000 });
    expect(options.policy.attemptTimeoutsMs).toEqual([10_000, 30_000, 60_000]);
  });

  it("are the same through create(), create({}) and an empty builder", () => {
    const expected = comparable(resolveOptions());
    expect(comparable(RetryReflectPlugin.create().options)).toEqual(expected);
    expect(comparable(RetryReflectPlugin.create({}).options)).toEqual(expected);
    expect(comparable(RetryReflectPlugin.builder().build().options)).toEqual(expected);
  });

  it("each plugin gets its own default idempotency store", () => {
    expect(RetryReflectPlugin.create().options.idempotency.store).not.toBe(RetryReflectPlugin.create().options.idempotency.store);
  });

  it("accepts the boundary values: no retries, no initial delay, multiplier 1, threshold 1", () => {
    const options = resolveOptions({
      maxRetries: 0,
      initialBackoffMs: 0,
      maxBackoffMs: 0,
      backoffMultiplier: 1,
      circuitBreakerThreshold: 1,
      maxErrorLength: 32,
    });
    expect(options.maxRetries).toBe(0);
    expect(options.initialBackoffMs).toBe(0);
    expect(options.maxBackoffMs).toBe(0);
    expect(options.backoffMultiplier).toBe(1);
    expect(options.circuitBreakerThreshold).toBe(1);
    expect(options.maxErrorLength).toBe(32);
  });
});

type NumericOption =
  | "maxRetries"
  | "initialBackoffMs"
  | "backoffMultiplier"
  | "maxBackoffMs"
  | "circuitBreakerThreshold"
  | "circuitBreakerResetMs"
  | "maxCircuitBreakers"
  | "maxAttemptCounters"
  | "maxErrorLength"
  | "patienceMs"
  | "giveUpMs"
  | "attemptTimeoutMs";

const NUMERIC: readonly NumericOption[] = [
  "maxRetries",
  "initialBackoffMs",
  "backoffMultiplier",
  "maxBackoffMs",
  "circuitBreakerThreshold",
  "circuitBreakerResetMs",
  "maxCircuitBreakers",
  "maxAttemptCounters",
  "maxErrorLength",
  "patienceMs",
  "giveUpMs",
  "attemptTimeoutMs",
];

/** Bad values and how the error message must show them. */
const BAD_NUMBERS: ReadonlyArray<readonly [unknown, string]> = [
  [-1, "-1"],
  [Number.NaN, "NaN"],
  [Number.POSITIVE_INFINITY, "Infinity"],
  [Number.NEGATIVE_INFINITY, "-Infinity"],
  ["3", '"3"'],
  [null, "null"],
  [true, "true"],
];

describe("numeric options are validated", () => {
  for (const name of NUMERIC) {
    for (const [value, shown] of BAD_NUMBERS) {
      it(`${name}: ${shown} throws naming the option and the value`, () => {
        const error = invalidOption(() => RetryReflectPlugin.create({ [name]: value } as RetryReflectOptions));
        expect(error.option).toBe(name);
        expect(error.value).toBe(value);
        expect(error.message).toContain(`\`${name}\``);
        expect(error.message).toContain(`received ${shown}`);
      });
    }
  }

  it("counts must be integers", () => {
    for (const name of ["maxRetries", "circuitBreakerThreshold", "maxCircuitBreakers", "maxAttemptCounters", "maxErrorLength"] as const) {
      expect(invalidOption(() => resolveOptions({ [name]: 2.5 })).option).toBe(name);
    }
  });

  it("a multiplier below 1 would shrink delays: rejected", () => {
    const error = invalidOption(() => resolveOptions({ backoffMultiplier: 0.5 }));
    expect(error.option).toBe("backoffMultiplier");
    expect(error.message).toContain("0.5");
  });

  it("thresholds and sizes below their minimum are rejected", () => {
    expect(invalidOption(() => resolveOptions({ circuitBreakerThreshold: 0 })).option).toBe("circuitBreakerThreshold");
    expect(invalidOption(() => resolveOptions({ circuitBreakerResetMs: 0 })).option).toBe("circuitBreakerResetMs");
    expect(invalidOption(() => resolveOptions({ maxErrorLength: 31 })).option).toBe("maxErrorLength");
    expect(invalidOption(() => resolveOptions({ maxCircuitBreakers: 0 })).option).toBe("maxCircuitBreakers");
  });

  it("idempotency ttlMs and leaseMs must be finite and positive", () => {
    for (const field of ["ttlMs", "leaseMs"] as const) {
      for (const [value, shown] of [...BAD_NUMBERS, [0, "0"] as const]) {
        const error = invalidOption(() => resolveOptions({ idempotency: { [field]: value } as never }));
        expect(error.option).toBe(`idempotency.${field}`);
        expect(error.message).toContain(`received ${shown}`);
      }
    }
  });

  it("patienceMs and giveUpMs accept 0, and are set per tool too", () => {
    const options = resolveOptions({ patienceMs: 0, giveUpMs: 0, tools: { slow: { patienceMs: 60_000, giveUpMs: 120_000 } } });
    expect([options.patienceMs, options.giveUpMs]).toEqual([0, 0]);
    expect(options.tools.get("slow")).toMatchObject({ patienceMs: 60_000, giveUpMs: 120_000 });
    expect(invalidOption(() => resolveOptions({ tools: { slow: { patienceMs: -1 } } })).option).toBe("tools.slow.patienceMs");
    expect(invalidOption(() => resolveOptions({ tools: { slow: { giveUpMs: Number.POSITIVE_INFINITY } } })).option).toBe(
      "tools.slow.giveUpMs",
    );
  });

  it("attemptTimeoutMs is a number (one limit for every attempt; 0: none) or a non-empty list of limits > 0 (one per attempt of the row, the last for every later one)", () => {
    expect(resolveOptions({ attemptTimeoutMs: 5_000 }).attemptTimeoutsMs).toEqual([5_000]);
    expect(resolveOptions({ attemptTimeoutMs: 0 }).attemptTimeoutsMs).toEqual([]);
    expect(resolveOptions({ attemptTimeoutMs: [10_000, 20_000, 40_000] }).attemptTimeoutsMs).toEqual([10_000, 20_000, 40_000]);
    // Set, it is no longer the default limit (even set to the default's values).
    expect(resolveOptions({ attemptTimeoutMs: [10_000, 30_000, 60_000] }).defaultLimit).toBe(false);
    // Per tool: the tool's list replaces the plugin's.
    const options = resolveOptions({ attemptTimeoutMs: 5_000, tools: { report: { attemptTimeoutMs: [60_000, 120_000] } } });
    expect(options.tools.get("report")?.attemptTimeoutsMs).toEqual([60_000, 120_000]);
    expect(options.attemptTimeoutsMs).toEqual([5_000]);
    // The list is copied: changing the caller's array after create() changes nothing.
    const limits = [1_000, 2_000];
    const copied = resolveOptions({ attemptTimeoutMs: limits });
    limits[0] = 99;
    expect(copied.attemptTimeoutsMs).toEqual([1_000, 2_000]);
    for (const bad of [[], [1_000, 0], [1_000, -1], [Number.NaN], [Number.POSITIVE_INFINITY], ["1000"], [null]]) {
      const error = invalidOption(() => resolveOptions({ attemptTimeoutMs: bad as never }));
      expect(error.option).toBe("attemptTimeoutMs");
      expect(error.value).toEqual(bad);
    }
    expect(invalidOption(() => resolveOptions({ tools: { report: { attemptTimeoutMs: [0] } } })).option).toBe(
      "tools.report.attemptTimeoutMs",
    );
  });

  it("maxBackoffMs below initialBackoffMs is contradictory", () => {
    const error = invalidOption(() => RetryReflectPlugin.create({ initialBackoffMs: 1_000, maxBackoffMs: 500 }));
    expect(error.option).toBe("maxBackoffMs");
    expect(error.message).toContain("500");
    expect(error.message).toContain("initialBackoffMs");
    expect(error.message).toContain("1000");
    // ... also against the default initial delay.
    expect(invalidOption(() => RetryReflectPlugin.create({ maxBackoffMs: 100 })).option).toBe("maxBackoffMs");
  });
});

describe("other options are validated", () => {
  it("an unknown option (a typo) throws naming it", () => {
    const error = invalidOption(() => RetryReflectPlugin.create({ maxRetry: 3 } as RetryReflectOptions));
    expect(error.option).toBe("maxRetry");
    expect(error.message).toContain("`maxRetry`");
    expect(error.message).toContain("maxRetries");
  });

  it("an unknown idempotency option throws naming it", () => {
    const error = invalidOption(() => resolveOptions({ idempotency: { keyfield: "key" } as never }));
    expect(error.option).toBe("idempotency.keyfield");
  });

  it("options that are not an object throw", () => {
    expect(invalidOption(() => RetryReflectPlugin.create(null as unknown as RetryReflectOptions)).option).toBe("options");
    expect(invalidOption(() => RetryReflectPlugin.create([] as unknown as RetryReflectOptions)).option).toBe("options");
  });

  it("jitter, trackingScope, onExhausted and defaultEffect accept only their documented values", () => {
    const cases: ReadonlyArray<readonly [keyof RetryReflectOptions, unknown]> = [
      ["jitter", "random"],
      ["jitter", "Full"],
      ["trackingScope", "session"],
      ["onExhausted", "ignore"],
      ["defaultEffect", "delete"],
    ];
    for (const [name, value] of cases) {
      const error = invalidOption(() => RetryReflectPlugin.create({ [name]: value } as RetryReflectOptions));
      expect(error.option).toBe(name);
      expect(error.message).toContain(JSON.stringify(value));
    }
    expect(invalidOption(() => resolveOptions({ jitter: "random" as never })).message).toContain('"decorrelated"');
  });

  it("every documented enum value is accepted", () => {
    for (const jitter of ["none", "full", "equal", "decorrelated"] as const) expect(resolveOptions({ jitter }).jitter).toBe(jitter);
    expect(resolveOptions({ trackingScope: "global" }).trackingScope).toBe("global");
    expect(resolveOptions({ onExhausted: "throw" }).onExhausted).toBe("throw");
    expect(resolveOptions({ defaultEffect: "write" }).defaultEffect).toBe("write");
  });

  it("toolEffects values are checked per tool", () => {
    const error = invalidOption(() => RetryReflectPlugin.create({ toolEffects: { get_weather: "read", send_email: "writes" as never } }));
    expect(error.option).toBe("toolEffects.send_email");
    expect(error.message).toContain('"writes"');
    expect(invalidOption(() => resolveOptions({ toolEffects: ["write"] as never })).option).toBe("toolEffects");
  });

  it("includeTools / excludeTools must be arrays of non-empty names", () => {
    expect(invalidOption(() => resolveOptions({ includeTools: "api_call" as never })).option).toBe("includeTools");
    expect(invalidOption(() => resolveOptions({ excludeTools: ["exit_loop", ""] })).option).toBe("excludeTools");
    expect(invalidOption(() => resolveOptions({ excludeTools: [42] as never })).option).toBe("excludeTools");
  });

  it("an invalid reflection prompt fails at create()", () => {
    expect(invalidOption(() => RetryReflectPlugin.create({ reflectionPrompt: "{tool} failed" })).option).toBe("reflectionPrompt");
    expect(invalidOption(() => RetryReflectPlugin.create({ reflectionPrompt: null as never })).option).toBe("reflectionPrompt");
  });

  it("a bad clock throws naming clock", () => {
    for (const clock of [{ now: () => 0 }, { sleep: async () => {} }, { now: 0, sleep: async () => {} }, "system", null]) {
      const error = invalidOption(() => RetryReflectPlugin.create({ clock: clock as never }));
      expect(error.option).toBe("clock");
    }
    const clock = createFakeClock();
    expect(RetryReflectPlugin.create({ clock }).options.clock).toBe(clock);
  });

  it("a bad idempotency store throws naming idempotency.store", () => {
    const incomplete = { begin: async () => ({ status: "acquired" }), complete: async () => {} };
    for (const store of [incomplete, {}, "redis", null]) {
      const error = invalidOption(() => RetryReflectPlugin.create({ idempotency: { store: store as never } }));
      expect(error.option).toBe("idempotency.store");
    }
    const store: IdempotencyStore = new InMemoryIdempotencyStore();
    expect(RetryReflectPlugin.create({ idempotency: { store } }).options.idempotency.store).toBe(store);
  });

  it("bad observers throw naming observers", () => {
    const cases: unknown[] = [{ onEvent: () => {} }, [null], ["console"], [() => {}], [{ onEvent: "log" }], [{ runInContext: true }], null];
    for (const observers of cases) {
      const error = invalidOption(() => RetryReflectPlugin.create({ observers: observers as never }));
      expect(error.option).toBe("observers");
    }
    expect(RetryReflectPlugin.create({ observers: [{}, { onEvent: () => {} }] }).options.observers).toHaveLength(2);
  });

  it("function options must be functions", () => {
    const names = ["classifyError", "redact", "random", "circuitBreakerKey"] as const;
    for (const name of names) {
      expect(invalidOption(() => resolveOptions({ [name]: "yes" } as RetryReflectOptions)).option).toBe(name);
    }
    expect(invalidOption(() => resolveOptions({ idempotency: { key: "idempotency_key" as never } })).option).toBe("idempotency.key");
  });

  it("boolean options must be booleans", () => {
    expect(invalidOption(() => resolveOptions({ circuitBreakerCountsInvalidArguments: "yes" as never })).option).toBe(
      "circuitBreakerCountsInvalidArguments",
    );
    for (const value of ["yes", 1, null]) {
      expect(invalidOption(() => resolveOptions({ waitForRecovery: value as never })).option).toBe("waitForRecovery");
    }
    expect(invalidOption(() => resolveOptions({ tools: { t: { waitForRecovery: 0 as never } } })).option).toBe("tools.t.waitForRecovery");
    expect(resolveOptions({ waitForRecovery: false }).waitForRecovery).toBe(false);
    expect(invalidOption(() => resolveOptions({ idempotency: { requireKey: 1 as never } })).option).toBe("idempotency.requireKey");
  });

  it("idempotency.keyField must be a non-empty string", () => {
    for (const keyField of ["", 42, null]) {
      expect(invalidOption(() => resolveOptions({ idempotency: { keyField: keyField as never } })).option).toBe("idempotency.keyField");
    }
  });
});

describe("the plugin does not follow later changes to the options object", () => {
  it("mutating toolEffects or observers after create() changes nothing", () => {
    const toolEffects: Record<string, "read" | "write"> = { send_email: "write" };
    const observers: RetryReflectObserver[] = [];
    const plugin = RetryReflectPlugin.create({ toolEffects, observers });
    toolEffects.send_email = "read";
    toolEffects.delete_user = "write";
    observers.push({ onEvent: () => {} });
    expect(plugin.effectOf("send_email")).toBe("write");
    expect(plugin.effectOf("delete_user")).toBe("read");
    expect(plugin.options.observers).toHaveLength(0);
  });

  it("a tool named like an Object.prototype member gets the default effect", () => {
    const plugin = RetryReflectPlugin.create({ toolEffects: { send_email: "write" }, defaultEffect: "idempotent" });
    expect(plugin.effectOf("toString")).toBe("idempotent");
    expect(plugin.effectOf("constructor")).toBe("idempotent");
    expect(plugin.effectOf("__proto__")).toBe("idempotent");
  });
});

describe("builder", () => {
  it("is immutable: a builder reused after .maxRetries(1) keeps its own value", () => {
    const base = RetryReflectPlugin.builder().maxRetries(5).initialBackoffMs(100);
    const strict = base.maxRetries(1);
    expect(base.build().options.maxRetries).toBe(5);
    expect(strict.build().options.maxRetries).toBe(1);
    expect(strict.build().options.initialBackoffMs).toBe(100);
    expect(base.toOptions()).toEqual({ maxRetries: 5, initialBackoffMs: 100 });
  });

  it(".observer() appends without touching the builder it came from", () => {
    const first: RetryReflectObserver = { onEvent: () => {} };
    const second: RetryReflectObserver = { onEvent: () => {} };
    const one = RetryReflectPlugin.builder().observer(first);
    const two = one.observer(second);
    expect(one.build().options.observers).toEqual([first]);
    expect(two.build().options.observers).toEqual([first, second]);
    expect(two.observers([second]).build().options.observers).toEqual([second]);
  });

  it("validates at build(), with the same error as create()", () => {
    const builder = RetryReflectPlugin.builder().maxRetries(-1);
    const error = invalidOption(() => builder.build());
    expect(error.option).toBe("maxRetries");
    expect(error.message).toBe(invalidOption(() => RetryReflectPlugin.create({ maxRetries: -1 })).message);
  });

  it("gives the same options as create() for the same fields", () => {
    const clock = createFakeClock();
    const observer: RetryReflectObserver = { onEvent: () => {} };
    const store = new InMemoryIdempotencyStore({ clock });
    const classify = () => undefined;
    const redact = (text: string) => text;
    const random = () => 0.5;
    const breakerKey = () => "k";
    const shouldRetry = () => undefined;
    const isFailure = () => undefined;
    const fallback = () => "cached";
    const fields = {
      maxRetries: 2,
      initialBackoffMs: 250,
      backoffMultiplier: 1.5,
      maxBackoffMs: 10_000,
      circuitBreakerThreshold: 3,
      circuitBreakerResetMs: 5_000,
      circuitBreakerKey: breakerKey,
      circuitBreakerCountsInvalidArguments: true,
      maxCircuitBreakers: 50,
      reflectionPrompt: "{tool_name}: {error} ({error_code}) {{attempt {attempt}/{max_retries}}}",
      retryLaterPrompt: "{tool_name} again in {retry_after_s} s",
      includeTools: ["api_call", "db_query"],
      excludeTools: ["exit_loop"],
      jitter: "equal",
      toolEffects: { send_email: "write" },
      defaultEffect: "idempotent",
      idempotency: { store, keyField: "request_id", ttlMs: 1_000, leaseMs: 500, requireKey: false },
      classifyError: classify,
      trackingScope: "global",
      maxAttemptCounters: 20,
      onExhausted: "throw",
      maxErrorLength: 200,
      redact,
      observers: [observer],
      clock,
      random,
      circuitBreakerFailureRate: 0.5,
      circuitBreakerMinimumCalls: 4,
      circuitBreakerWindowMs: 30_000,
      circuitBreakerMaxResetMs: 120_000,
      exhaustedPrompt: "{tool_name} is done: {error}",
      notRecoverablePrompt: "{tool_name} cannot: {error}",
      circuitOpenPrompt: "{tool_name} is down for {retry_after_s} s",
      attemptTimeoutMs: [2_000, 8_000],
      patienceMs: 30_000,
      giveUpMs: 45_000,
      waitForRecovery: false,
      shouldRetry,
      isFailure,
      maxConcurrent: 3,
      fallback,
      repeatedCallLimit: 2,
      exhaustedResetMs: 120_000,
      retryBudget: { ratio: 0.2, windowMs: 5_000 },
      tools: { search: { maxRetries: 5, attemptTimeoutMs: 500, patienceMs: 1_000 } },
      // A failure-rate breaker is not for a shared store: the store has a test of its own.
    } as const satisfies Omit<Required<RetryReflectOptions>, "circuitBreakerStore">;

    const built = RetryReflectPlugin.builder()
      .maxRetries(fields.maxRetries)
      .initialBackoffMs(fields.initialBackoffMs)
      .backoffMultiplier(fields.backoffMultiplier)
      .maxBackoffMs(fields.maxBackoffMs)
      .circuitBreakerThreshold(fields.circuitBreakerThreshold)
      .circuitBreakerResetMs(fields.circuitBreakerResetMs)
      .circuitBreakerKey(fields.circuitBreakerKey)
      .circuitBreakerCountsInvalidArguments(fields.circuitBreakerCountsInvalidArguments)
      .maxCircuitBreakers(fields.maxCircuitBreakers)
      .reflectionPrompt(fields.reflectionPrompt)
      .retryLaterPrompt(fields.retryLaterPrompt)
      .includeTools(fields.includeTools)
      .excludeTools(fields.excludeTools)
      .jitter(fields.jitter)
      .toolEffects(fields.toolEffects)
      .defaultEffect(fields.defaultEffect)
      .idempotency(fields.idempotency)
      .classifyError(fields.classifyError)
      .trackingScope(fields.trackingScope)
      .maxAttemptCounters(fields.maxAttemptCounters)
      .onExhausted(fields.onExhausted)
      .maxErrorLength(fields.maxErrorLength)
      .redact(fields.redact)
      .observer(observer)
      .clock(fields.clock)
      .random(fields.random)
      .circuitBreakerFailureRate(fields.circuitBreakerFailureRate)
      .circuitBreakerMinimumCalls(fields.circuitBreakerMinimumCalls)
      .circuitBreakerWindowMs(fields.circuitBreakerWindowMs)
      .circuitBreakerMaxResetMs(fields.circuitBreakerMaxResetMs)
      .exhaustedPrompt(fields.exhaustedPrompt)
      .notRecoverablePrompt(fields.notRecoverablePrompt)
      .circuitOpenPrompt(fields.circuitOpenPrompt)
      .attemptTimeoutMs(fields.attemptTimeoutMs)
      .patienceMs(fields.patienceMs)
      .giveUpMs(fields.giveUpMs)
      .waitForRecovery(fields.waitForRecovery)
      .shouldRetry(fields.shouldRetry)
      .isFailure(fields.isFailure)
      .maxConcurrent(fields.maxConcurrent)
      .fallback(fields.fallback)
      .repeatedCallLimit(fields.repeatedCallLimit)
      .exhaustedResetMs(fields.exhaustedResetMs)
      .retryBudget(fields.retryBudget)
      .tool("search", fields.tools.search)
      .build();
    const created = RetryReflectPlugin.create(fields);

    expect(comparable(built.options)).toEqual(comparable(created.options));
    // And each field really is the given value, not a default.
    const options = built.options;
    expect(options.maxRetries).toBe(2);
    expect(options.initialBackoffMs).toBe(250);
    expect(options.backoffMultiplier).toBe(1.5);
    expect(options.maxBackoffMs).toBe(10_000);
    expect(options.circuitBreakerThreshold).toBe(3);
    expect(options.circuitBreakerResetMs).toBe(5_000);
    expect(options.circuitBreakerKey).toBe(breakerKey);
    expect(options.circuitBreakerCountsInvalidArguments).toBe(true);
    expect(options.maxCircuitBreakers).toBe(50);
    expect(options.template.source).toBe(fields.reflectionPrompt);
    expect(options.retryLaterTemplate.source).toBe(fields.retryLaterPrompt);
    expect([...options.includeTools]).toEqual(["api_call", "db_query"]);
    expect([...options.excludeTools]).toEqual(["exit_loop"]);
    expect(options.jitter).toBe("equal");
    expect(options.toolEffects.send_email).toBe("write");
    expect(options.defaultEffect).toBe("idempotent");
    expect(options.idempotency.store).toBe(store);
    expect(created.options.idempotency.store).toBe(store);
    expect(options.idempotency.keyField).toBe("request_id");
    expect(options.idempotency.ttlMs).toBe(1_000);
    expect(options.idempotency.leaseMs).toBe(500);
    expect(options.idempotency.requireKey).toBe(false);
    expect(options.classifyError).toBe(classify);
    expect(options.trackingScope).toBe("global");
    expect(options.maxAttemptCounters).toBe(20);
    expect(options.onExhausted).toBe("throw");
    expect(options.maxErrorLength).toBe(200);
    expect(options.redact).toBe(redact);
    expect(options.observers).toEqual([observer]);
    expect(options.clock).toBe(clock);
    expect(options.random).toBe(random);
    expect(options.circuitBreakerFailureRate).toBe(0.5);
    expect(options.circuitBreakerMinimumCalls).toBe(4);
    expect(options.circuitBreakerWindowMs).toBe(30_000);
    expect(options.circuitBreakerMaxResetMs).toBe(120_000);
    expect(options.exhaustedTemplate?.source).toBe(fields.exhaustedPrompt);
    expect(options.notRecoverableTemplate?.source).toBe(fields.notRecoverablePrompt);
    expect(options.circuitOpenTemplate?.source).toBe(fields.circuitOpenPrompt);
    expect(options.attemptTimeoutsMs).toEqual([2_000, 8_000]);
    expect(options.defaultLimit).toBe(false);
    expect(options.patienceMs).toBe(30_000);
    expect(options.giveUpMs).toBe(45_000);
    expect(options.waitForRecovery).toBe(false);
    expect(options.shouldRetry).toBe(shouldRetry);
    expect(options.isFailure).toBe(isFailure);
    expect(options.maxConcurrent).toBe(3);
    expect(options.fallback).toBe(fallback);
    expect(options.repeatedCallLimit).toBe(2);
    expect(options.exhaustedResetMs).toBe(120_000);
    expect(options.retryBudget).toEqual({ ratio: 0.2, minPerSecond: 1, windowMs: 5_000 });
    const search = options.tools.get("search");
    expect(search?.maxRetries).toBe(5);
    expect(search?.attemptTimeoutsMs).toEqual([500]);
    expect(search?.patienceMs).toBe(1_000);
    // The rest of the tool's policy is the plugin's.
    expect(search?.initialBackoffMs).toBe(250);
    expect(search?.maxConcurrent).toBe(3);
    expect(search?.giveUpMs).toBe(45_000);
    expect(search?.waitForRecovery).toBe(false);
  });

  it("has one method per option, each setting the field of the same name", () => {
    const samples: Required<RetryReflectOptions> = {
      maxRetries: 1,
      initialBackoffMs: 2,
      backoffMultiplier: 3,
      maxBackoffMs: 4,
      circuitBreakerThreshold: 5,
      circuitBreakerResetMs: 6,
      circuitBreakerKey: () => "k",
      circuitBreakerCountsInvalidArguments: true,
      maxCircuitBreakers: 7,
      reflectionPrompt: "{error}",
      retryLaterPrompt: "{error}",
      includeTools: ["a"],
      excludeTools: ["b"],
      jitter: "full",
      toolEffects: { c: "write" },
      defaultEffect: "write",
      idempotency: { keyField: "k" },
      classifyError: () => undefined,
      trackingScope: "global",
      maxAttemptCounters: 8,
      onExhausted: "throw",
      maxErrorLength: 64,
      redact: (text) => text,
      observers: [{}],
      clock: createFakeClock(),
      random: () => 0,
      circuitBreakerFailureRate: 0.25,
      circuitBreakerMinimumCalls: 9,
      circuitBreakerWindowMs: 10,
      circuitBreakerMaxResetMs: 11,
      exhaustedPrompt: "x {error}",
      notRecoverablePrompt: "y {error}",
      circuitOpenPrompt: "z {retry_after_s}",
      attemptTimeoutMs: 12,
      patienceMs: 16,
      giveUpMs: 17,
      waitForRecovery: false,
      shouldRetry: () => false,
      isFailure: () => false,
      maxConcurrent: 13,
      fallback: () => "f",
      repeatedCallLimit: 14,
      exhaustedResetMs: 15,
      retryBudget: { ratio: 0.5 },
      tools: { d: { maxRetries: 0 } },
      circuitBreakerStore: { isClosed: () => true } as never,
    };
    for (const [name, value] of Object.entries(samples)) {
      const builder = RetryReflectPlugin.builder() as unknown as Record<string, (value: unknown) => { toOptions(): RetryReflectOptions }>;
      expect(typeof builder[name], name).toBe("function");
      expect(builder[name]!.call(builder, value).toOptions()).toEqual({ [name]: value });
    }
  });
});
