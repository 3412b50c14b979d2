// A breaker store that several plugins share, on the load section's virtual clock: what a fleet of
// replicas over `@retry-reflect/redis` shares, without Redis (whose scripts read the server's own
// clock, not a virtual one). One state per tool for every plugin: the circuit (an in-memory
// `CircuitBreaker` per breaker settings, as the store's scripts keep one hash per tool) and the
// retry budget's window (the BUDGET script's arithmetic: counts per bucket of a tenth of the
// window, a retry taken when retries + 1 ≤ ratio × calls + minPerSecond × window seconds). As the
// Redis store does, it answers a closed circuit's acquire, and a success with nothing to forget, at
// once; anything else a microtask later (its "round trip"). Every plugin reads the shared state at
// once: a publish that takes no time, the best case of the Redis store's local view.

import type { CircuitState, Clock } from "@retry-reflect/core";
import { CircuitBreaker } from "@retry-reflect/core/primitives";
import type {
  BudgetShare,
  BudgetShareReply,
  CircuitAdmission,
  CircuitBreakerStore,
  CircuitPermit,
  CircuitResult,
  CircuitStoreSettings,
  CircuitTransition,
} from "@retry-reflect/core/stores";

export class FleetStore implements CircuitBreakerStore {
  /** Store operations that would be a round trip to Redis (acquire of a circuit not closed, record, shareBudget). */
  roundTrips = 0;
  private readonly servers = new Map<string, CircuitBreaker>();
  private readonly failing = new Set<string>();
  private readonly budgets = new Map<string, Map<number, [calls: number, retries: number]>>();
  private last: CircuitTransition | undefined;

  constructor(private readonly clock: Clock) {}

  private server(settings: CircuitStoreSettings): CircuitBreaker {
    const id = `${settings.threshold}/${settings.resetMs}/${settings.maxResetMs}`;
    let server = this.servers.get(id);
    if (server === undefined) {
      server = new CircuitBreaker({ ...settings, clock: this.clock, onTransition: (transition) => (this.last = transition) });
      this.servers.set(id, server);
    }
    return server;
  }

  private holding(key: string): CircuitBreaker | undefined {
    for (const server of this.servers.values()) if (!server.isClosed(key)) return server;
    return undefined;
  }

  isClosed(key: string): boolean {
    return this.holding(key) === undefined;
  }

  peek(key: string): number | undefined {
    return this.holding(key)?.peek(key);
  }

  state(key: string): CircuitState {
    return this.holding(key)?.state(key) ?? "closed";
  }

  acquire(key: string, settings: CircuitStoreSettings): Promise<CircuitAdmission> {
    const server = this.server(settings);
    if (server.isClosed(key)) return Promise.resolve({ admitted: true, permit: { probe: 0 } });
    this.roundTrips++;
    return Promise.resolve().then(() => {
      this.last = undefined;
      const decision = server.acquire(key);
      return this.last === undefined ? decision : { ...decision, transition: this.last };
    });
  }

  record(
    key: string,
    permit: CircuitPermit,
    result: CircuitResult,
    settings: CircuitStoreSettings,
  ): Promise<CircuitTransition | undefined> {
    const server = this.server(settings);
    if (result === "success" && permit.probe === 0 && !this.failing.has(key) && server.isClosed(key)) return Promise.resolve(undefined);
    this.roundTrips++;
    return Promise.resolve().then(() => {
      this.last = undefined;
      if (result === "success") {
        server.onSuccess(key, permit);
        this.failing.delete(key);
      } else if (result === "failure") {
        server.onFailure(key, permit);
        this.failing.add(key);
      } else server.onNeutral(key, permit);
      return this.last;
    });
  }

  async isolate(key: string): Promise<void> {
    for (const server of this.servers.values()) server.isolate(key);
  }

  async reset(key?: string): Promise<void> {
    for (const server of this.servers.values()) server.reset(key);
  }

  async shareBudget(key: string, share: BudgetShare): Promise<BudgetShareReply> {
    this.roundTrips++;
    await Promise.resolve();
    const bucket = Math.floor((this.clock.now() * 10) / share.windowMs);
    const oldest = bucket - 9;
    let counts = this.budgets.get(key);
    if (counts === undefined) {
      counts = new Map();
      this.budgets.set(key, counts);
    }
    for (let i = 0; i + 2 < share.counts.length; i += 3) {
      const at = bucket - (share.counts[i] ?? 0);
      if (at < oldest || at > bucket) continue;
      const entry = counts.get(at) ?? [0, 0];
      entry[0] += share.counts[i + 1] ?? 0;
      entry[1] += share.counts[i + 2] ?? 0;
      counts.set(at, entry);
    }
    let calls = 0;
    let retries = 0;
    for (const [at, [called, retried]] of counts) {
      if (at < oldest || at > bucket) counts.delete(at);
      else {
        calls += called;
        retries += retried;
      }
    }
    const taken = share.take && retries + 1 <= share.ratio * calls + (share.minPerSecond * share.windowMs) / 1000;
    if (taken) {
      const entry = counts.get(bucket) ?? [0, 0];
      entry[1] += 1;
      counts.set(bucket, entry);
    }
    const buckets: number[] = [];
    for (const [at, [called, retried]] of [...counts].sort(([a], [b]) => a - b)) buckets.push(bucket - at, called, retried);
    return { taken, buckets };
  }
}
