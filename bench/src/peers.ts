import {
  BrokenCircuitError,
  ConsecutiveBreaker,
  ConstantBackoff,
  circuitBreaker,
  handleAll,
  handleWhen,
  type IPolicy,
  retry,
  TimeoutStrategy,
  timeout,
  wrap,
} from "cockatiel";
import Opossum from "opossum";
import pRetry, { type Options as PRetryOptions } from "p-retry";

/**
 * The peers, configured like our defaults where they can be: 3 retries, a consecutive-failure
 * breaker of 5, a long reset. Backoff 0 so a failure-path measurement measures the library.
 */
export function cockatielRetryBreaker(options: { threshold?: number; halfOpenAfter?: number } = {}): IPolicy {
  const breaker = circuitBreaker(handleAll, {
    halfOpenAfter: options.halfOpenAfter ?? 60_000,
    breaker: new ConsecutiveBreaker(options.threshold ?? 5),
  });
  // An open circuit must not be retried (that would sleep); everything else is.
  const retryPolicy = retry(
    handleWhen((error) => !(error instanceof BrokenCircuitError)),
    {
      maxAttempts: 3,
      backoff: new ConstantBackoff(0),
    },
  );
  return wrap(retryPolicy, breaker);
}

/** The same, with a 60 s time limit per attempt inside the retry (as our default `attemptTimeoutMs`): a careful user's setup. */
export function cockatielRetryBreakerTimeout(): IPolicy {
  const breaker = circuitBreaker(handleAll, { halfOpenAfter: 60_000, breaker: new ConsecutiveBreaker(5) });
  const retryPolicy = retry(
    handleWhen((error) => !(error instanceof BrokenCircuitError)),
    { maxAttempts: 3, backoff: new ConstantBackoff(0) },
  );
  return wrap(retryPolicy, breaker, timeout(60_000, TimeoutStrategy.Aggressive));
}

export function cockatielBreaker(options: { threshold?: number; halfOpenAfter?: number } = {}) {
  return circuitBreaker(handleAll, {
    halfOpenAfter: options.halfOpenAfter ?? 60_000,
    breaker: new ConsecutiveBreaker(options.threshold ?? 5),
  });
}

export function opossumBreaker<T>(action: () => Promise<T>, options: Opossum.Options = {}): Opossum<[], T> {
  return new Opossum(action, { timeout: false, resetTimeout: 60_000, ...options });
}

/**
 * p-retry 7 with every documented option given explicitly (`index.d.ts` of p-retry 7.1.1), backoff 0.
 * `pRetry` copies the options (`{ ...options }`) and then fills each missing option with `??=`: an
 * object that lacks some of them changes shape on every call (p-retry's slow path on Node 20).
 * With every option present nothing is added. `signal` is left out on purpose: no other
 * contestant is given an abort signal, and p-retry never adds one itself.
 */
export const pRetryFullOptions: PRetryOptions = {
  retries: 3,
  factor: 2,
  minTimeout: 0,
  maxTimeout: Number.POSITIVE_INFINITY,
  maxRetryTime: Number.POSITIVE_INFINITY,
  randomize: false,
  onFailedAttempt: () => {},
  shouldRetry: () => true,
  shouldConsumeRetry: () => true,
  unref: false,
};

/** p-retry configured like the others (3 retries, backoff 0), every option given: what the targets compare with. */
export function pRetryFullCall<T>(tool: () => Promise<T>): Promise<T> {
  return pRetry(tool, pRetryFullOptions);
}

/**
 * p-retry with no options object (its defaults: 10 retries, 1 s backoff, so only the success path
 * can use it). Shown for context beside the every-option row.
 */
export function pRetryDefaultCall<T>(tool: () => Promise<T>): Promise<T> {
  return pRetry(tool);
}

/** The note on p-retry's three configurations, and which one the targets use (every option given). */
export const P_RETRY_VARIANTS_NOTE =
  "p-retry can be configured three ways: no options object, a partial options object such as `{ retries: 3, minTimeout: 0 }`, or every documented option given. " +
  "On Node 20 the partial object is p-retry's slow path (earlier runs of this bench: several times the cost of no options object, all of it self time inside `pRetry`): " +
  "`pRetry` spreads the object and then adds each missing option with `??=`, which changes the copy's shape on every call. " +
  'The partial variant is therefore not shown; "p-retry (every option given)" is the configured p-retry the targets compare with (`signal` left unset: no contestant is given one).';

export { BrokenCircuitError, Opossum };
