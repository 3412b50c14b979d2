import type {
  CircuitAdmission,
  CircuitBreakerStore,
  CircuitPermit,
  CircuitResult,
  CircuitState,
  CircuitStoreSettings,
  CircuitTransition,
  Clock,
} from "@retry-reflect/core";
import { ACQUIRE, ISOLATE, RECORD, RESET } from "./breaker-scripts.js";
import { hashed } from "./key-names.js";
import { type RedisStoreOptions, resolveRedisOptions, warnOnEviction } from "./options.js";
import type { ScriptClient } from "./script-client.js";

/** What this process knows of a circuit that is not closed; `until` on the local clock. */
interface View {
  state: "open" | "half-open" | "isolated";
  until: number;
}

const CLOSED: CircuitAdmission = Object.freeze({ admitted: true, permit: Object.freeze({ probe: 0 }) });
const RESULT_CODES: Record<CircuitResult, string> = { success: "s", failure: "f", neutral: "n" };
/** Circuits held in the local view at most (the least recently changed dropped beyond). */
const MAX_VIEWS = 10_000;

/**
 * One circuit breaker per key (tool name) shared by every process on the same Redis server and
 * prefix. The state lives in Redis, changed by one Lua script per operation on the server's clock;
 * each process keeps a local view: a closed circuit is answered from it with no I/O, and an open
 * one rejects from it until its open time is over. The replica whose failure opened a circuit
 * knows it from the script's reply; the others from a publish, within milliseconds. After its open
 * time, exactly one call fleet-wide is let through as the probe; its success closes the circuit
 * everywhere. A success resets the shared failure count: at once when this process had recorded
 * failures of the key, else with its next recorded failure. Counts consecutive failures only (no
 * failure rate). Redis down: the local view goes on (a `store_error` from the plugin).
 */
export class RedisCircuitBreakerStore implements CircuitBreakerStore {
  readonly prefix: string;
  /** Resolves once this process receives the other replicas' state changes (rejects if it could not subscribe). */
  readonly subscribed: Promise<void>;
  private readonly redis: ScriptClient;
  private readonly clock: Clock;
  private readonly channel: string;
  private readonly views = new Map<string, View>();
  /** The version (server microseconds) of the newest state this process applied, per key: an older reply or publish is ignored. */
  private readonly versions = new Map<string, number>();
  /**
   * Keys whose failures this process recorded (a success must tell Redis at once), the one whose
   * failure came longest ago first; at most `maxFailingTools`.
   */
  private readonly failing = new Set<string>();
  private readonly maxFailingTools: number;
  /** Keys that succeeded here since this process last recorded a failure of them (the next failure resets the count first). */
  private readonly succeeded = new Set<string>();
  private unsubscribe: (() => Promise<void>) | undefined;
  private closed = false;

  constructor(options: RedisStoreOptions) {
    const resolved = resolveRedisOptions(options);
    this.redis = resolved.redis;
    this.prefix = resolved.prefix;
    this.clock = resolved.clock;
    this.maxFailingTools = resolved.maxFailingTools;
    this.channel = `${this.prefix}circuits`;
    warnOnEviction(this.redis, options.client);
    this.subscribed = this.redis
      .subscribe(this.channel, (message) => this.learn(message))
      .then((stop) => {
        if (this.closed) return void stop();
        this.unsubscribe = stop;
      });
    // Without the subscription the local view learns from its own replies only: not a crash.
    this.subscribed.catch((error: unknown) =>
      process.emitWarning(
        `retry-reflect: could not subscribe to ${this.channel} (${error instanceof Error ? error.message : String(error)}): this process learns of circuits opened elsewhere only when it calls the tool`,
        { code: "RETRY_REFLECT_REDIS_SUBSCRIBE" },
      ),
    );
  }

  /**
   * The Redis key of a circuit: the prefix and a hash of the key (a tool name, which a model may
   * pick, never appears in a key name); the hash tag keeps it in one cluster slot.
   */
  keyOf(key: string): string {
    return `${this.prefix}cb:{${hashed(key)}}`;
  }

  /** Circuits held in the local view (not closed as far as this process knows). */
  get size(): number {
    return this.views.size;
  }

  /** Tools this process knows to be in a failing row (failures recorded here since their last success): at most `maxFailingTools`. */
  get failingTools(): number {
    return this.failing.size;
  }

  isClosed(key: string): boolean {
    return this.views.size === 0 || !this.views.has(key);
  }

  peek(key: string): number | undefined {
    const view = this.views.get(key);
    if (view === undefined) return undefined;
    if (view.state === "isolated") return Number.POSITIVE_INFINITY;
    const left = view.until - this.clock.now();
    return left > 0 ? left : undefined;
  }

  state(key: string): CircuitState {
    const view = this.views.get(key);
    if (view === undefined) return "closed";
    if (view.state === "isolated") return "open";
    return view.state === "open" && view.until > this.clock.now() ? "open" : "half-open";
  }

  acquire(key: string, settings: CircuitStoreSettings): CircuitAdmission | Promise<CircuitAdmission> {
    const view = this.views.get(key);
    if (view === undefined) return CLOSED;
    const left = this.peek(key);
    if (left !== undefined) return { admitted: false, retryAfterMs: left, state: view.state === "half-open" ? "half-open" : "open" };
    return this.redis.run(ACQUIRE, [this.keyOf(key)], [this.channel, key, settings.resetMs]).then((reply) => {
      const [what, , remaining, failures, openMs, version] = parse(reply);
      const fresh = this.fresh(key, version);
      switch (what) {
        case "closed":
          if (fresh) this.views.delete(key);
          return CLOSED;
        case "probe": {
          // This process holds the probe: its other calls are rejected here for the probe's lease.
          if (fresh) this.see(key, "half-open", settings.resetMs);
          const admission: CircuitAdmission = { admitted: true, permit: { probe: Number((reply as unknown[])[1]) } };
          if (Number((reply as unknown[])[2]) !== 1) return admission;
          const transition: CircuitTransition = { key, from: "open", to: "half-open", failures, resetMs: openMs };
          return { ...admission, transition };
        }
        case "isolated":
          if (fresh) this.see(key, "isolated", 0);
          return { admitted: false, retryAfterMs: Number.POSITIVE_INFINITY, state: "open" };
        default:
          if (fresh) this.see(key, what === "half" ? "half-open" : "open", remaining);
          return { admitted: false, retryAfterMs: Math.max(1, remaining), state: what === "half" ? "half-open" : "open" };
      }
    });
  }

  record(
    key: string,
    permit: CircuitPermit,
    result: CircuitResult,
    settings: CircuitStoreSettings,
  ): CircuitTransition | undefined | Promise<CircuitTransition | undefined> {
    if (permit.probe === 0) {
      if (result === "neutral") return undefined;
      if (result === "success") {
        // Nothing to tell while this process knows of no failure: the next failure resets the count first.
        if (!this.failing.has(key)) {
          if (this.views.size === 0 || !this.views.has(key)) this.succeeded.add(key);
          if (this.succeeded.size > MAX_VIEWS) this.succeeded.delete(this.succeeded.values().next().value as string);
          return undefined;
        }
      }
    }
    const resetFirst = result === "failure" && this.succeeded.delete(key) ? 1 : 0;
    return this.redis
      .run(
        RECORD,
        [this.keyOf(key)],
        [this.channel, key, RESULT_CODES[result], permit.probe, settings.threshold, settings.resetMs, settings.maxResetMs ?? 0, resetFirst],
      )
      .then((reply) => {
        const [what, state, remaining, failures, openMs, version] = parse(reply);
        // A reply older than a state change this process already applied (a publish that came
        // first, on the other connection) changes no view; the counts and the event still hold.
        const fresh = this.fresh(key, version);
        if (what === "counted") this.fail(key);
        else if (what === "reset" || what === "opened" || what === "closed") this.failing.delete(key);
        if (fresh) {
          if (what === "reset" || what === "closed") this.views.delete(key);
          else if (what === "opened" || what === "reopened") this.see(key, "open", remaining);
          else if (what === "freed")
            this.see(key, "open", 0); // the next call here asks Redis for the probe
          else if (what === "stale") this.sync(key, state, remaining);
        }
        return transitionOf(what, key, failures, openMs, settings.resetMs);
      });
  }

  async isolate(key: string): Promise<void> {
    const reply = await this.redis.run(ISOLATE, [this.keyOf(key)], [this.channel, key]);
    if (this.fresh(key, versionOf(reply))) this.see(key, "isolated", 0);
  }

  /** Closes `key` everywhere; without a key, every circuit this process holds in its local view. */
  async reset(key?: string): Promise<void> {
    const keys = key === undefined ? [...this.views.keys()] : [key];
    const replies = await Promise.all(keys.map((each) => this.redis.run(RESET, [this.keyOf(each)], [this.channel, each])));
    keys.forEach((each, index) => {
      if (!this.fresh(each, versionOf(replies[index]))) return;
      this.views.delete(each);
      this.failing.delete(each);
    });
  }

  /** Ends the subscription (the client is yours: it stays open). */
  async close(): Promise<void> {
    this.closed = true;
    await this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** A state change published by any replica (this one's included). */
  private learn(message: string): void {
    let change: { k?: unknown; s?: unknown; r?: unknown; v?: unknown };
    try {
      change = JSON.parse(message) as typeof change;
    } catch {
      return;
    }
    if (typeof change.k !== "string" || !this.fresh(change.k, Number(change.v) || 0)) return;
    const remaining = typeof change.r === "number" ? change.r : 0;
    if (change.s === "closed") {
      this.views.delete(change.k);
      this.failing.delete(change.k);
    } else if (change.s === "open") this.see(change.k, "open", remaining);
    else if (change.s === "isolated") this.see(change.k, "isolated", 0);
  }

  /** A reply that changed nothing still says the state: the local view follows it. */
  private sync(key: string, state: string, remaining: number): void {
    if (state === "closed") this.views.delete(key);
    else if (state === "isolated") this.see(key, "isolated", 0);
    else this.see(key, state === "half" ? "half-open" : "open", Math.max(0, remaining));
  }

  /** Is `version` newer than the newest state of `key` applied here? Then it is the newest. */
  private fresh(key: string, version: number): boolean {
    const last = this.versions.get(key);
    if (last !== undefined && version <= last) return false;
    this.versions.delete(key);
    this.versions.set(key, version);
    if (this.versions.size > MAX_VIEWS) this.versions.delete(this.versions.keys().next().value as string);
    return true;
  }

  /** Remembers that `key` is in a failing row here, as the newest; forgets the oldest beyond `maxFailingTools`. */
  private fail(key: string): void {
    this.failing.delete(key);
    this.failing.add(key);
    if (this.failing.size > this.maxFailingTools) this.failing.delete(this.failing.values().next().value as string);
  }

  private see(key: string, state: View["state"], remainingMs: number): void {
    this.views.delete(key);
    this.views.set(key, { state, until: this.clock.now() + remainingMs });
    if (this.views.size > MAX_VIEWS) this.views.delete(this.views.keys().next().value as string);
  }
}

/** `[what, state, remaining, failures, openMs, version]` of a breaker script's reply. */
function parse(reply: unknown): [string, string, number, number, number, number] {
  if (!Array.isArray(reply) || typeof reply[0] !== "string") {
    throw new TypeError(`unexpected reply from Redis: ${JSON.stringify(reply)?.slice(0, 80)}`);
  }
  return [reply[0], String(reply[1]), Number(reply[2]) || 0, Number(reply[3]) || 0, Number(reply[4]) || 0, Number(reply[5]) || 0];
}

/** The version of an isolate/reset reply (`[state, version]`). */
function versionOf(reply: unknown): number {
  return Array.isArray(reply) ? Number(reply[1]) || 0 : 0;
}

/** The transition a record reply reports (also when its view update is stale: the change happened). */
function transitionOf(what: string, key: string, failures: number, openMs: number, resetMs: number): CircuitTransition | undefined {
  if (what === "opened") return { key, from: "closed", to: "open", failures, resetMs: openMs };
  if (what === "reopened") return { key, from: "half-open", to: "open", failures, resetMs: openMs };
  if (what === "closed") return { key, from: "half-open", to: "closed", failures, resetMs };
  return undefined;
}
