import type { Clock } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError } from "../errors/tool-error.js";
import type { ExecuteOutcome } from "../outcome.js";
import {
  ARGUMENTS_TOO_DEEP_ACTION,
  argumentsTooDeepMessage,
  keyRequiredAction,
  keyRequiredMessage,
  UNREADABLE_ARGUMENTS_MESSAGE,
} from "../texts/model-texts.js";
import { ArgumentDepthError, argumentsFingerprint } from "./fingerprint.js";
import type { GuardedCall, GuardRefusal, IdempotencySettings } from "./guarded-call.js";
import { hash128 } from "./hash64.js";
import type { IdempotencyStore } from "./idempotency-store.js";
import { type Flight, SingleFlight } from "./single-flight.js";
import { type RecordRules, type StoreErrorReport, StoreLock } from "./store-lock.js";
import type { LockAnswer } from "./store-protocol.js";
import { readKey, refusal } from "./store-protocol.js";

/**
 * The argument a write's fingerprint leaves out: the key argument (`keyField`), unless the key comes
 * from `key(call)` (then every argument is content). With `derive: "always"` the key is never the
 * model's, so `keyField` is left out even with `key(call)`: a write re-issued with a new key in that
 * argument is the same write.
 */
export function omittedField(settings: IdempotencySettings): string | undefined {
  return settings.key === undefined || settings.derive === "always" ? settings.keyField : undefined;
}

/**
 * The idempotency guard of `write` tools, one unit: the key and fingerprint (here), single flight in
 * this process (`SingleFlight`: joins, bounded by the leader's lease and the joiner's own abort),
 * and the store protocol (`StoreLock`: `begin` / `extend` / `complete` / `release`), whose faults
 * never become a rejection.
 */
export class IdempotencyGuard {
  private readonly flights: SingleFlight;
  private readonly storeLock: StoreLock;
  private readonly storeKeys = new StoreKeys();

  constructor(
    readonly store: IdempotencyStore,
    clock: Clock,
    onStoreError: StoreErrorReport,
    readonly records: RecordRules = {},
  ) {
    this.flights = new SingleFlight();
    this.storeLock = new StoreLock(store, clock, onStoreError, records);
  }

  /** Reads the key and fingerprints the arguments (once per call): `"unguarded"`, a refusal, or `"guarded"`. */
  prepare(run: GuardedCall): "unguarded" | GuardRefusal | "guarded" {
    run.prepared ??= this.read(run);
    return run.prepared;
  }

  private read(run: GuardedCall): "unguarded" | GuardRefusal | "guarded" {
    const { key: keyOf, keyField, requireKey } = run.idempotency;
    // A tool whose schema has no key argument cannot be given one: its key is derived, never asked for.
    const undeclared = run.call.declaresKey === false;
    const derive = undeclared && run.idempotency.derive === "never" ? "when-missing" : run.idempotency.derive;
    let given: string | undefined;
    let fingerprint: string;
    try {
      given = derive === "always" ? undefined : keyOf ? keyOf(run.call) : undeclared ? undefined : readKey(run.call.args, keyField);
      fingerprint = argumentsFingerprint(run.call.args, omittedField(run.idempotency));
    } catch (error) {
      // The model's arguments, not the tool: an attempt, never a breaker failure. Arguments that
      // cannot be read as data (a getter that throws, a Proxy) are refused the same way.
      return { refusal: unreadableArguments(error) };
    }
    const namespace = namespaceOf(run);
    // A derived key: the same call of the same tool in the same run (scope) and namespace is the
    // same operation, whatever key (or none) the model gave it; never merged across runs or namespaces.
    const key =
      given ?? (derive === "never" ? undefined : `derived-${hash128(namespace, run.call.scope ?? "default", run.toolName, fingerprint)}`);
    if (key === undefined) {
      if (!requireKey) return "unguarded";
      return {
        conflict: "key_required",
        refusal: refusal(ErrorCodes.IDEMPOTENCY_KEY_REQUIRED, keyRequiredMessage(run.toolName), keyRequiredAction(keyField)),
      };
    }
    run.idempotencyKey = key;
    // Hashed before any store sees it: a key is a key only within its namespace and tool.
    run.storeKey = this.storeKeys.of(namespace, run.toolName, key);
    run.fingerprint = fingerprint;
    return "guarded";
  }

  /** Joins a call with the same key in flight here (its outcome), or leads (`SingleFlight`). */
  enter<T>(run: GuardedCall): Promise<{ flight: Flight } | { shared: ExecuteOutcome<T> } | GuardRefusal> {
    return this.flights.enter(run);
  }

  /** Takes the store's lock for one attempt: a token, the stored result to replay, or a refusal (`StoreLock`). */
  lock(run: GuardedCall): Promise<LockAnswer> {
    return this.storeLock.lock(run);
  }

  /** Renews the write's lease while its attempt runs, for stores with `extend` (`StoreLock`); the returned function stops it. */
  keepLease(run: GuardedCall, token: string): (() => void) | undefined {
    return this.storeLock.keepLease(run, token);
  }

  /** Stores the write's result, or only reports why not (`StoreLock`). */
  complete(run: GuardedCall, token: string, value: unknown): Promise<void> {
    return this.storeLock.complete(run, token, value);
  }

  /** Drops the lock after a failed attempt, so that a retry may run (`StoreLock`). */
  release(run: GuardedCall, token: string): Promise<void> {
    return this.storeLock.release(run, token);
  }
}

/** The most keys whose store key is remembered; and the longest key remembered (longer ones are hashed each time). */
const STORE_KEYS_KEPT = 1024;
const STORE_KEY_MAX_LENGTH = 256;

/**
 * The store keys of the keys seen last (`hash128` of namespace, tool and key): a write called again
 * with its key (a replay, a retry) is not hashed again, and its store key, the same string as
 * before, has its hash for the Map lookups cached. One entry per key: a key used under another
 * namespace or tool replaces it. At most `STORE_KEYS_KEPT` keys of at most `STORE_KEY_MAX_LENGTH`
 * characters; when full, it starts afresh.
 */
class StoreKeys {
  private readonly byKey = new Map<string, { readonly namespace: string; readonly toolName: string; readonly storeKey: string }>();

  of(namespace: string, toolName: string, key: string): string {
    const known = this.byKey.get(key);
    if (known !== undefined && known.namespace === namespace && known.toolName === toolName) return known.storeKey;
    const storeKey = hash128(namespace, toolName, key);
    if (key.length <= STORE_KEY_MAX_LENGTH) {
      if (known === undefined && this.byKey.size >= STORE_KEYS_KEPT) this.byKey.clear();
      this.byKey.set(key, { namespace, toolName, storeKey });
    }
    return storeKey;
  }
}

/** Whose writes a call's are: `call.namespace`, else the call's own scope (not the tracking scope: `"global"` shares counters, never results). */
function namespaceOf(run: GuardedCall): string {
  return run.call.namespace ?? run.call.scope ?? "default";
}

/** Arguments too deep, or that cannot be read as data: `INVALID_ARGUMENTS`, the write does not run. */
function unreadableArguments(error: unknown): ToolError {
  const tooDeep = error instanceof ArgumentDepthError;
  return createToolError({
    code: ErrorCodes.INVALID_ARGUMENTS,
    message: tooDeep ? argumentsTooDeepMessage(error.maxDepth) : UNREADABLE_ARGUMENTS_MESSAGE,
    recoverable: true,
    suggestedAction: ARGUMENTS_TOO_DEEP_ACTION,
    kind: "invalid_arguments",
  });
}
