import { randomUUID } from "node:crypto";
import type { CircuitState } from "@retry-reflect/core";
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
import { admissionOf, CLOSED, parse, transitionOf, versionOf } from "./breaker-replies.js";
import { ACQUIRE, acquireArgs, acquireReleaseArgs, BUDGET, ISOLATE, READ, RECORD, RESET } from "./breaker-scripts.js";
import { CircuitReads, KEYS_PER_READ } from "./circuit-reads.js";
import { CircuitViews, MAX_VIEWS } from "./circuit-views.js";
import { HeldSubscription, subscribeWarning } from "./held-subscription.js";
import { isClusterClient } from "./is-cluster-client.js";
import { hashed } from "./key-names.js";
import { type RedisStoreOptions, resolveRedisOptions, warnOnEviction } from "./options.js";
import { mayStillRun, OwnerReleases } from "./owner-releases.js";
import type { ScriptClient } from "./script-client.js";
import { whenReady } from "./when-ready.js";

const RESULT_CODES: Record<CircuitResult, string> = { success: "s", failure: "f", neutral: "n" };

/**
 * One circuit breaker per key (tool name) shared by every process on the same Redis server and
 * prefix. The state lives in Redis, changed by one Lua script per operation on the server's clock;
 * each process keeps a local view: a closed circuit is answered from it with no I/O, and an open
 * one rejects from it until its open time is over. The replica whose failure opened a circuit
 * knows it from the script's reply; the others from a publish, within milliseconds. After its open
 * time, exactly one call fleet-wide is let through as the probe; its success closes the circuit
 * everywhere. A success resets the shared failure count: at once when this process had recorded
 * failures of the key (or read that it is in a failing row), else with its next recorded failure.
 * Counts consecutive failures only (no failure rate). Redis down: the local view goes on (a
 * `store_error` from the plugin). The first call of each tool here reads its circuit from Redis
 * (one script for the tools first called in the same tick), and every (re)subscribe reads them
 * all again, so a replica that starts, or hears nothing for a while, never runs a tool whose
 * circuit is open fleet-wide. The subscription is retried with backoff until it holds. Each
 * acquire sent to Redis carries an owner id of its own: when it got no reply in time, the probe it
 * may still take when Redis answers late is released, tried again until Redis answers or the
 * probe's lease ends (`close()` stops those releases).
 */
export class RedisCircuitBreakerStore implements CircuitBreakerStore {
  readonly prefix: string;
  /**
   * Resolves once the subscription first holds: this process hears the other replicas' state
   * changes and has read the circuits of the tools it used so far. Until then (the client not
   * ready, Redis down) it is retried with backoff; it rejects only if the store is closed first.
   */
  readonly subscribed: Promise<void>;
  private readonly redis: ScriptClient;
  private readonly channel: string;
  /** What this process knows of the circuits: the local view, the versions applied, the failing rows. */
  private readonly local: CircuitViews;
  /** `local`'s maps, held here for the healthy call's lookups. */
  private readonly views: CircuitViews["views"];
  private readonly failing: CircuitViews["failing"];
  /** The tools this process uses, read from Redis on first use and after every (re)subscribe. */
  private readonly reads: CircuitReads;
  /** The same map as `reads.known`, held here for the healthy call's one lookup. */
  private readonly known: Map<string, number>;
  private readonly subscription: HeldSubscription;
  /** The releases of acquires that got no reply (not private: tests wait for them). */
  readonly ownerReleases: OwnerReleases;

  constructor(options: RedisStoreOptions) {
    const resolved = resolveRedisOptions(options);
    this.redis = resolved.redis;
    this.prefix = resolved.prefix;
    this.channel = `${this.prefix}circuits`;
    this.local = new CircuitViews(resolved.clock, resolved.maxFailingTools);
    this.views = this.local.views;
    this.failing = this.local.failing;
    warnOnEviction(this.redis, options.client);
    this.reads = new CircuitReads(
      // A first call may come before the client connected (a process just started): wait for it, within the command limit.
      (keys, resetMs) =>
        whenReady(
          () =>
            this.redis.run(
              READ,
              keys.map((key) => this.keyOf(key)),
              resetMs,
            ),
          resolved.commandTimeoutMs,
        ),
      (key, state, remaining, failures, version) => this.local.read(key, state, remaining, failures, version),
      MAX_VIEWS,
      isClusterClient(options.client) ? 1 : KEYS_PER_READ,
    );
    this.known = this.reads.known;
    this.subscription = new HeldSubscription({
      redis: this.redis,
      channel: this.channel,
      onMessage: (message) => this.local.learn(message),
      onHeld: () => this.reads.relearn(),
      onFailing: (error) => subscribeWarning(this.channel, error),
    });
    this.subscribed = this.subscription.ready;
    const channel = this.channel;
    this.ownerReleases = new OwnerReleases(this.redis, {
      script: ACQUIRE,
      args: (owner, leaseLeftMs, key) => acquireReleaseArgs(channel, key, owner, leaseLeftMs),
    });
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
    // A tool not read from Redis yet is not known to be closed: its first call asks (acquire).
    return this.known.has(key) && (this.views.size === 0 || !this.views.has(key));
  }

  peek(key: string): number | undefined {
    return this.local.peek(key);
  }

  state(key: string): CircuitState {
    return this.local.state(key);
  }

  async acquire(key: string, settings: CircuitStoreSettings): Promise<CircuitAdmission> {
    // First use: the fleet's state of this circuit is read before the call may run (a read that
    // fails rejects: the plugin then decides from the local view, and the next resubscribe reads it).
    if (!this.known.has(key)) {
      await this.reads.learn(key, settings.resetMs);
      return this.acquire(key, settings);
    }
    const view = this.views.get(key);
    if (view === undefined) return CLOSED;
    const left = this.local.peek(key);
    if (left !== undefined) return { admitted: false, retryAfterMs: left, state: view.state === "half-open" ? "half-open" : "open" };
    const redisKey = this.keyOf(key);
    const owner = randomUUID();
    let reply: unknown;
    try {
      reply = await this.redis.run(ACQUIRE, [redisKey], acquireArgs(this.channel, key, settings.resetMs, owner));
    } catch (error) {
      // The caller hears nothing from Redis: a probe taken by a late reply must not hold the slot.
      if (mayStillRun(error)) this.ownerReleases.release(redisKey, owner, settings.resetMs, key);
      throw error;
    }
    return admissionOf(this.local, key, reply, settings);
  }

  async record(
    key: string,
    permit: CircuitPermit,
    result: CircuitResult,
    settings: CircuitStoreSettings,
  ): Promise<CircuitTransition | undefined> {
    if (permit.probe === 0 && result !== "failure") {
      if (result === "neutral") return undefined;
      // Nothing to tell while this process knows of no failing row: the next failure resets the count first.
      if (!this.failing.has(key)) return void this.local.succeed(key);
      // The row ends fleet-wide at once, one script (the other calls' successes meanwhile send none);
      // the call does not wait for it, nor fail with it: unheard, the row is known here again.
      this.failing.delete(key);
      this.send(key, permit, result, settings, 0).catch(() => this.local.fail(key));
      return undefined;
    }
    return this.send(key, permit, result, settings, result === "failure" && this.local.succeeded.delete(key) ? 1 : 0);
  }

  /** Runs the record script and applies its reply; the transition it reports. */
  private send(
    key: string,
    permit: CircuitPermit,
    result: CircuitResult,
    settings: CircuitStoreSettings,
    resetFirst: 0 | 1,
  ): Promise<CircuitTransition | undefined> {
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
        const fresh = this.local.fresh(key, version);
        if (what === "counted") this.local.fail(key);
        else if (what === "reset" || what === "opened" || what === "closed") this.failing.delete(key);
        if (fresh) {
          if (what === "reset" || what === "closed") this.views.delete(key);
          else if (what === "opened" || what === "reopened") this.local.see(key, "open", remaining);
          else if (what === "freed")
            this.local.see(key, "open", 0); // the next call here asks Redis for the probe
          else if (what === "stale") this.local.sync(key, state, remaining);
        }
        return transitionOf(what, key, failures, openMs, settings.resetMs);
      });
  }

  async isolate(key: string): Promise<void> {
    const reply = await this.redis.run(ISOLATE, [this.keyOf(key)], [this.channel, key]);
    if (this.local.fresh(key, versionOf(reply))) this.local.see(key, "isolated", 0);
  }

  /** Closes `key` everywhere; without a key, every circuit this process holds in its local view. */
  async reset(key?: string): Promise<void> {
    const keys = key === undefined ? [...this.views.keys()] : [key];
    const replies = await Promise.all(keys.map((each) => this.redis.run(RESET, [this.keyOf(each)], [this.channel, each])));
    keys.forEach((each, index) => {
      if (!this.local.fresh(each, versionOf(replies[index]))) return;
      this.views.delete(each);
      this.failing.delete(each);
    });
  }

  /**
   * The Redis key of a tool's retry budget (`retryBudget`): the prefix and a hash of the tool name,
   * in a cluster slot of its own (its hash tag is not the circuit's).
   */
  budgetKeyOf(key: string): string {
    return `${this.prefix}rb:{${hashed(key)}}`;
  }

  /**
   * A tool's retry budget, fleet-wide: one script adds this process's counts to the tool's window
   * in Redis and, with `take`, takes one in-place retry when the window has room (atomically).
   * The plugin asks it on the failure path only; a rejection (Redis down, late) leaves the budget
   * to this process's own view until Redis answers again.
   */
  async shareBudget(key: string, share: BudgetShare): Promise<BudgetShareReply> {
    const floor = (share.minPerSecond * share.windowMs) / 1000;
    const reply = await this.redis.run(
      BUDGET,
      [this.budgetKeyOf(key)],
      [share.windowMs, share.ratio, floor, share.take ? 1 : 0, ...share.counts],
    );
    if (!Array.isArray(reply) || reply.length % 3 !== 1)
      throw new TypeError(`shareBudget: an unexpected reply from Redis: ${JSON.stringify(reply)}`);
    return { taken: reply[0] === 1, buckets: reply.slice(1).map(Number) };
  }

  /** Ends the subscription and the releases of acquires that got no reply (the client is yours: it stays open). */
  async close(): Promise<void> {
    this.ownerReleases.close();
    await this.subscription.close();
  }
}
