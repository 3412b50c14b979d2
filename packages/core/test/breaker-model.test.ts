import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RetryReflectPlugin } from "../src/index.js";
import { CircuitBreaker, type CircuitSnapshot } from "../src/primitives.js";
import type { CircuitPermit } from "../src/stores.js";
import { createFakeClock } from "../src/testing.js";

const THRESHOLD = 3;
const RESET_MS = 100;

/**
 * The breaker as DESIGN.md states it, written plainly: consecutive failures open a closed circuit;
 * after `resetMs` the next call is the one probe; the probe's result closes or re-opens it; a probe
 * whose lease (`resetMs`) ran out is stale, and a stale result never changes anything.
 */
type ModelState =
  | { kind: "closed"; failures: number }
  | { kind: "open"; failures: number; openedAt: number }
  | { kind: "half-open"; failures: number; probe: number | undefined; probeStartedAt: number };

type ModelPermit = { probe: number | undefined };

class ReferenceBreaker {
  private states = new Map<string, ModelState>();
  private probes = 0;
  readonly transitions: string[] = [];

  constructor(private readonly now: () => number) {}

  private get(key: string): ModelState {
    return this.states.get(key) ?? { kind: "closed", failures: 0 };
  }

  private move(key: string, next: ModelState): void {
    const from = this.get(key).kind;
    if (from !== next.kind) this.transitions.push(`${key}:${from}->${next.kind}`);
    this.states.set(key, next);
  }

  state(key: string): string {
    const state = this.get(key);
    if (state.kind === "open" && this.now() - state.openedAt >= RESET_MS) return "half-open";
    return state.kind;
  }

  failures(key: string): number {
    return this.get(key).failures;
  }

  acquire(key: string): { admitted: true; permit: ModelPermit } | { admitted: false; retryAfterMs: number } {
    const state = this.get(key);
    const now = this.now();
    if (state.kind === "closed") return { admitted: true, permit: { probe: undefined } };
    if (state.kind === "open") {
      if (now - state.openedAt < RESET_MS) return { admitted: false, retryAfterMs: state.openedAt + RESET_MS - now };
      const probe = ++this.probes;
      this.move(key, { kind: "half-open", failures: state.failures, probe, probeStartedAt: now });
      return { admitted: true, permit: { probe } };
    }
    if (state.probe !== undefined && now - state.probeStartedAt < RESET_MS) {
      return { admitted: false, retryAfterMs: Math.max(1, state.probeStartedAt + RESET_MS - now) };
    }
    const probe = ++this.probes;
    this.states.set(key, { ...state, probe, probeStartedAt: now });
    return { admitted: true, permit: { probe } };
  }

  private isLiveProbe(state: ModelState, permit: ModelPermit): boolean {
    return (
      state.kind === "half-open" &&
      permit.probe !== undefined &&
      state.probe === permit.probe &&
      this.now() - state.probeStartedAt < RESET_MS
    );
  }

  success(key: string, permit: ModelPermit): void {
    const state = this.get(key);
    if (permit.probe === undefined) {
      if (state.kind === "closed") this.states.set(key, { kind: "closed", failures: 0 });
      return;
    }
    if (this.isLiveProbe(state, permit)) this.move(key, { kind: "closed", failures: 0 });
  }

  failure(key: string, permit: ModelPermit): void {
    const state = this.get(key);
    if (permit.probe === undefined) {
      if (state.kind !== "closed") return;
      const failures = state.failures + 1;
      this.move(key, failures >= THRESHOLD ? { kind: "open", failures, openedAt: this.now() } : { kind: "closed", failures });
      return;
    }
    if (this.isLiveProbe(state, permit)) this.move(key, { kind: "open", failures: state.failures + 1, openedAt: this.now() });
  }

  neutral(key: string, permit: ModelPermit): void {
    const state = this.get(key);
    if (this.isLiveProbe(state, permit) && state.kind === "half-open") this.states.set(key, { ...state, probe: undefined });
  }
}

type Command =
  | { op: "acquire"; key: number }
  | { op: "settle"; which: number; result: "success" | "failure" | "neutral" }
  | { op: "advance"; ms: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("acquire" as const), key: fc.integer({ min: 0, max: 1 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("settle" as const),
      which: fc.nat(),
      result: fc.constantFrom("success" as const, "failure" as const, "neutral" as const),
    }),
  },
  // Steps around resetMs, so that probes hang past their lease and finish late.
  { weight: 2, arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.constantFrom(1, 10, 50, 99, 100, 101, 150) }) },
);

describe("the circuit breaker against a reference model", () => {
  it("agrees on state, failures, rejections and transitions over 10,000 random sequences with concurrent calls and late probes", () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 40 }), (commands) => {
        let now = 0;
        const clock = { now: () => now, sleep: () => Promise.resolve(), timer: () => () => {} };
        const transitions: string[] = [];
        const breaker = new CircuitBreaker({
          threshold: THRESHOLD,
          resetMs: RESET_MS,
          clock,
          onTransition: (transition) => transitions.push(`${transition.key}:${transition.from}->${transition.to}`),
        });
        const model = new ReferenceBreaker(() => now);
        // Calls in flight: admitted, not yet settled (concurrent calls; probes among them).
        const inFlight: Array<{ key: string; real: CircuitPermit; model: ModelPermit }> = [];
        for (const step of commands) {
          if (step.op === "advance") {
            now += step.ms;
          } else if (step.op === "acquire") {
            const key = `k${step.key}`;
            const peeked = breaker.peek(key);
            const real = breaker.acquire(key);
            const expected = model.acquire(key);
            expect(real.admitted).toBe(expected.admitted);
            if (real.admitted && expected.admitted) {
              expect(peeked).toBeUndefined();
              inFlight.push({ key, real: real.permit, model: expected.permit });
            } else if (!real.admitted && !expected.admitted) {
              expect(real.retryAfterMs).toBe(expected.retryAfterMs);
              expect(peeked).toBe(expected.retryAfterMs);
            }
          } else if (inFlight.length > 0) {
            const [call] = inFlight.splice(step.which % inFlight.length, 1);
            if (call === undefined) continue;
            if (step.result === "success") {
              breaker.onSuccess(call.key, call.real);
              model.success(call.key, call.model);
            } else if (step.result === "failure") {
              breaker.onFailure(call.key, call.real);
              model.failure(call.key, call.model);
            } else {
              breaker.onNeutral(call.key, call.real);
              model.neutral(call.key, call.model);
            }
          }
          for (const key of ["k0", "k1"]) {
            expect(breaker.state(key)).toBe(model.state(key));
            expect(breaker.snapshot().breakers[key]?.failures ?? 0).toBe(model.failures(key));
          }
        }
        expect(transitions).toEqual(model.transitions);
      }),
      { numRuns: 10_000 },
    );
  }, 120_000); // 10,000 sequences: ~5 s alone, up to ~40 s on a loaded 2-core machine

  it("a hung probe's late success does not reset the failure count of a later, closed circuit", async () => {
    const clock = createFakeClock();
    const breaker = new CircuitBreaker({ threshold: 2, resetMs: 100, clock });
    breaker.onFailure("t", { probe: 0 });
    breaker.onFailure("t", { probe: 0 });
    expect(breaker.state("t")).toBe("open");
    await clock.advance(100);
    const hung = breaker.acquire("t"); // the probe, which hangs
    if (!hung.admitted) throw new Error("the probe should be admitted");
    await clock.advance(100); // its lease ran out
    const second = breaker.acquire("t");
    if (!second.admitted) throw new Error("a new probe should be admitted");
    breaker.onSuccess("t", second.permit); // closes the circuit
    breaker.onFailure("t", { probe: 0 }); // one failure of the closed circuit
    breaker.onSuccess("t", hung.permit); // the hung probe finishes late
    breaker.onFailure("t", { probe: 0 }); // the second failure opens at the threshold
    expect(breaker.state("t")).toBe("open");
  });

  it("a probe whose lease ran out but whose slot nobody took is stale too", async () => {
    const clock = createFakeClock();
    const breaker = new CircuitBreaker({ threshold: 1, resetMs: 100, clock });
    breaker.onFailure("t", { probe: 0 });
    await clock.advance(100);
    const probe = breaker.acquire("t");
    if (!probe.admitted) throw new Error("the probe should be admitted");
    await clock.advance(150);
    breaker.onSuccess("t", probe.permit);
    expect(breaker.state("t")).toBe("half-open");
  });
});

/** The options a policy model runs with: the consecutive count or a failure rate, fixed or growing open periods. */
interface Policy {
  threshold: number;
  resetMs: number;
  maxResetMs: number | undefined;
  failureRate: number | undefined;
  minimumCalls: number;
  windowMs: number;
}

type Call = { at: number; failed: boolean };

type PolicyState =
  | { kind: "closed"; failures: number; calls: Call[] }
  | { kind: "open"; failures: number; openedAt: number; openMs: number }
  | { kind: "half-open"; failures: number; probe: number | undefined; probeStartedAt: number; openMs: number };

/**
 * The breaker with every option, written plainly from DESIGN.md and the option docs. With a
 * failure rate, a closed circuit keeps every call of its closed period with its time; a call counts
 * while it is in one of the 10 newest buckets of `windowMs / 10` (time buckets numbered from 0), so
 * for at most `windowMs`. After each recorded call, with at least `minimumCalls` counting, the
 * circuit opens when failures / calls >= the rate. Every opening from closed lasts `resetMs`; each
 * failed probe doubles the last open time, up to `maxResetMs` (without it: `resetMs` again). The
 * probe's lease is `resetMs` whatever the open time.
 */
class PolicyModel {
  private states = new Map<string, PolicyState>();
  private probes = 0;
  readonly transitions: string[] = [];

  constructor(
    private readonly policy: Policy,
    private readonly now: () => number,
    /** How often each case the test must reach happened (summed over all runs). */
    private readonly seen: Record<Case, number>,
  ) {}

  private get(key: string): PolicyState {
    return this.states.get(key) ?? { kind: "closed", failures: 0, calls: [] };
  }

  /** Records the transition with the failures that led to it (a closing reports those it forgets). */
  private move(key: string, next: PolicyState, resetMs: number): void {
    const current = this.get(key);
    const failures = next.kind === "closed" ? current.failures : next.failures;
    if (current.kind !== next.kind) this.transitions.push(`${key}:${current.kind}->${next.kind}:${failures}:${resetMs}`);
    if (next.kind === "open" && resetMs > this.policy.resetMs) this.seen.grownOpen++;
    if (next.kind === "open" && resetMs === this.policy.maxResetMs && current.kind === "half-open" && current.openMs * 2 > resetMs)
      this.seen.cappedOpen++;
    this.states.set(key, next);
  }

  private counting(calls: Call[]): Call[] {
    const bucket = (time: number) => Math.floor((time * 10) / this.policy.windowMs);
    const newest = bucket(this.now());
    return calls.filter((call) => bucket(call.at) > newest - 10);
  }

  state(key: string): string {
    const state = this.get(key);
    if (state.kind === "open" && this.now() - state.openedAt >= state.openMs) return "half-open";
    return state.kind;
  }

  /** What `snapshot()` reports as `failures`: consecutive ones, those counting in the window, or those that opened it. */
  failures(key: string): number {
    const state = this.get(key);
    if (state.kind === "closed" && this.policy.failureRate !== undefined)
      return this.counting(state.calls).filter((call) => call.failed).length;
    return state.failures;
  }

  acquire(key: string): { admitted: true; permit: ModelPermit } | { admitted: false; retryAfterMs: number } {
    const state = this.get(key);
    const now = this.now();
    const lease = this.policy.resetMs;
    if (state.kind === "closed") return { admitted: true, permit: { probe: undefined } };
    if (state.kind === "open") {
      if (now - state.openedAt < state.openMs) return { admitted: false, retryAfterMs: state.openedAt + state.openMs - now };
      const probe = ++this.probes;
      this.move(key, { kind: "half-open", failures: state.failures, probe, probeStartedAt: now, openMs: state.openMs }, state.openMs);
      return { admitted: true, permit: { probe } };
    }
    if (state.probe !== undefined && now - state.probeStartedAt < lease) {
      return { admitted: false, retryAfterMs: Math.max(1, state.probeStartedAt + lease - now) };
    }
    if (state.probe !== undefined && state.openMs > lease) this.seen.leaseEndedInGrownPeriod++;
    const probe = ++this.probes;
    this.states.set(key, { ...state, probe, probeStartedAt: now });
    return { admitted: true, permit: { probe } };
  }

  private isLiveProbe(state: PolicyState, permit: ModelPermit): state is Extract<PolicyState, { kind: "half-open" }> {
    return (
      state.kind === "half-open" &&
      permit.probe !== undefined &&
      state.probe === permit.probe &&
      this.now() - state.probeStartedAt < this.policy.resetMs
    );
  }

  private recordClosed(key: string, state: Extract<PolicyState, { kind: "closed" }>, failed: boolean): void {
    const { failureRate, minimumCalls, threshold, resetMs } = this.policy;
    const now = this.now();
    if (failureRate === undefined) {
      const failures = failed ? state.failures + 1 : 0;
      if (failures >= threshold) this.move(key, { kind: "open", failures, openedAt: now, openMs: resetMs }, resetMs);
      else this.states.set(key, { kind: "closed", failures, calls: [] });
      return;
    }
    const calls = this.counting([...state.calls, { at: now, failed }]);
    const failures = calls.filter((call) => call.failed).length;
    if (calls.length <= state.calls.length) this.seen.callsExpired++;
    if (calls.length >= minimumCalls && failures / calls.length >= failureRate) {
      this.seen[failed ? "rateOpenedOnFailure" : "rateOpenedOnSuccess"]++;
      this.move(key, { kind: "open", failures, openedAt: now, openMs: resetMs }, resetMs);
    } else {
      this.states.set(key, { kind: "closed", failures: 0, calls });
    }
  }

  success(key: string, permit: ModelPermit): void {
    const state = this.get(key);
    if (permit.probe !== undefined && !this.isLiveProbe(state, permit)) this.seen.staleProbeResult++;
    if (permit.probe === undefined) {
      if (state.kind === "closed") this.recordClosed(key, state, false);
      return;
    }
    if (this.isLiveProbe(state, permit)) this.move(key, { kind: "closed", failures: 0, calls: [] }, this.policy.resetMs);
  }

  failure(key: string, permit: ModelPermit): void {
    const state = this.get(key);
    if (permit.probe === undefined) {
      if (state.kind === "closed") this.recordClosed(key, state, true);
      return;
    }
    if (!this.isLiveProbe(state, permit)) return;
    const { resetMs, maxResetMs } = this.policy;
    const openMs = maxResetMs === undefined ? resetMs : Math.min(state.openMs * 2, maxResetMs);
    this.move(key, { kind: "open", failures: state.failures + 1, openedAt: this.now(), openMs }, openMs);
  }

  neutral(key: string, permit: ModelPermit): void {
    const state = this.get(key);
    if (this.isLiveProbe(state, permit)) this.states.set(key, { ...state, probe: undefined });
  }

  /** A snapshot restored into the same breaker at the same time: only a running probe is lost. */
  restored(): void {
    for (const [key, state] of this.states) {
      if (state.kind !== "closed" && state.openMs > this.policy.resetMs) this.seen.restoredGrownPeriod++;
      if (state.kind === "closed" && this.failures(key) > 0 && this.policy.failureRate !== undefined) this.seen.restoredWindow++;
      if (state.kind === "half-open") this.states.set(key, { ...state, probe: undefined, probeStartedAt: this.now() });
    }
  }
}

type PolicyCommand = Command | { op: "restore" };

const CASES = [
  "rateOpenedOnFailure",
  "rateOpenedOnSuccess",
  "callsExpired",
  "grownOpen",
  "cappedOpen",
  "leaseEndedInGrownPeriod",
  "staleProbeResult",
  "restoredGrownPeriod",
  "restoredWindow",
] as const;
type Case = (typeof CASES)[number];

const policy: fc.Arbitrary<Policy> = fc.record({
  threshold: fc.integer({ min: 1, max: 4 }),
  resetMs: fc.constant(RESET_MS),
  maxResetMs: fc.constantFrom(undefined, RESET_MS, 250, 400, 1000),
  failureRate: fc.constantFrom(undefined, 0.1, 0.25, 1 / 3, 0.5, 0.6, 1),
  minimumCalls: fc.integer({ min: 1, max: 5 }),
  windowMs: fc.constantFrom(95, 100, 250, 1000),
});

const policyCommand: fc.Arbitrary<PolicyCommand> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("acquire" as const), key: fc.integer({ min: 0, max: 1 }) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant("settle" as const),
      which: fc.nat(),
      result: fc.constantFrom("success" as const, "failure" as const, "failure" as const, "neutral" as const),
    }),
  },
  // Around the lease and the window's buckets, and long enough for grown open periods to end.
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.constantFrom(1, 9, 10, 24, 50, 99, 100, 101, 150, 400) }),
  },
  { weight: 1, arbitrary: fc.constant({ op: "restore" as const }) },
);

/** `expect(actual).toBe(expected)`, built only on a mismatch (10,000 runs of ~50 steps call it ~2 million times). */
function agree(actual: unknown, expected: unknown, what: string): void {
  if (!Object.is(actual, expected)) expect(actual, what).toBe(expected);
}

describe("the failure-rate breaker and growing open periods against a reference model", () => {
  it("agrees on state, failures, rejections, open times and transitions over 10,000 random policies and sequences", () => {
    const seen = Object.fromEntries(CASES.map((name) => [name, 0])) as Record<Case, number>;
    fc.assert(
      fc.property(policy, fc.array(policyCommand, { minLength: 1, maxLength: 80, size: "max" }), (options, commands) => {
        let now = 0;
        const clock = { now: () => now, sleep: () => Promise.resolve(), timer: () => () => {} };
        const transitions: string[] = [];
        const breaker = new CircuitBreaker({
          ...options,
          clock,
          onTransition: (transition) =>
            transitions.push(`${transition.key}:${transition.from}->${transition.to}:${transition.failures}:${transition.resetMs}`),
        });
        const model = new PolicyModel(options, () => now, seen);
        const inFlight: Array<{ key: string; real: CircuitPermit; model: ModelPermit }> = [];
        for (const step of commands) {
          if (step.op === "advance") {
            now += step.ms;
          } else if (step.op === "restore") {
            breaker.restore(JSON.parse(JSON.stringify(breaker.snapshot())) as CircuitSnapshot);
            model.restored();
          } else if (step.op === "acquire") {
            const key = `k${step.key}`;
            const peeked = breaker.peek(key);
            const real = breaker.acquire(key);
            const expected = model.acquire(key);
            agree(real.admitted, expected.admitted, "admitted");
            if (real.admitted && expected.admitted) {
              agree(peeked, undefined, "peek before an admission");
              inFlight.push({ key, real: real.permit, model: expected.permit });
            } else if (!real.admitted && !expected.admitted) {
              agree(real.retryAfterMs, expected.retryAfterMs, "retryAfterMs");
              agree(peeked, expected.retryAfterMs, "peek before a rejection");
            }
          } else if (inFlight.length > 0) {
            const [call] = inFlight.splice(step.which % inFlight.length, 1);
            if (call === undefined) continue;
            if (step.result === "success") {
              breaker.onSuccess(call.key, call.real);
              model.success(call.key, call.model);
            } else if (step.result === "failure") {
              breaker.onFailure(call.key, call.real);
              model.failure(call.key, call.model);
            } else {
              breaker.onNeutral(call.key, call.real);
              model.neutral(call.key, call.model);
            }
          }
          const snapshot = breaker.snapshot();
          for (const key of ["k0", "k1"]) {
            agree(breaker.state(key), model.state(key), `state of ${key}`);
            agree(snapshot.breakers[key]?.failures ?? 0, model.failures(key), `failures of ${key}`);
          }
        }
        expect(transitions).toEqual(model.transitions);
      }),
      { numRuns: 10_000 },
    );
    // The sequences must reach every case the model states, not just agree on easy ones.
    for (const name of CASES) expect(seen[name], name).toBeGreaterThanOrEqual(10);
  }, 120_000); // 10,000 sequences: ~5 s alone, up to ~40 s on a loaded 2-core machine
});

describe("restore validates the whole snapshot before it changes anything", () => {
  const bad: unknown[] = [
    { version: 1, breakers: { payments: { state: "open", failures: 5, remainingMs: 1000 }, search: { state: "weird", failures: 0 } } },
    { version: 1, breakers: { payments: { state: "open", failures: 5, remainingMs: 1000 }, search: { state: "closed", failures: -1 } } },
    {
      version: 1,
      breakers: {
        payments: { state: "open", failures: 5, remainingMs: 1000 },
        search: { state: "open", failures: 1, remainingMs: "soon" },
      },
    },
    { version: 1, breakers: { payments: { state: "open", failures: 5, remainingMs: 1000 }, search: null } },
    { version: 1, breakers: [] },
    { version: 2, breakers: {} },
  ];
  for (const snapshot of bad) {
    it(`rejects ${JSON.stringify(snapshot)} and keeps the open payments circuit`, async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 1 });
      await plugin.execute({ toolName: "payments", args: {} }, () => {
        throw new Error("upstream exploded");
      });
      const before = plugin.circuits.snapshot();
      expect(plugin.circuitState("payments")).toBe("open");
      expect(() => plugin.circuits.restore(snapshot as CircuitSnapshot)).toThrow(TypeError);
      expect(plugin.circuitState("payments")).toBe("open");
      expect(plugin.circuits.snapshot()).toEqual(before);
    });
  }

  it("a valid snapshot round-trips", () => {
    const clock = createFakeClock();
    const breaker = new CircuitBreaker({ threshold: 2, resetMs: 1000, clock });
    breaker.onFailure("a", { probe: 0 });
    breaker.onFailure("b", { probe: 0 });
    breaker.onFailure("b", { probe: 0 });
    breaker.isolate("c");
    const copy = new CircuitBreaker({ threshold: 2, resetMs: 1000, clock });
    copy.restore(JSON.parse(JSON.stringify(breaker.snapshot())) as CircuitSnapshot);
    expect(copy.snapshot()).toEqual(breaker.snapshot());
  });
});
