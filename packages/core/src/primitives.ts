// `@retry-reflect/core/primitives`: the building blocks the plugin is made of, each usable on its
// own. The plugin does not need you to touch any of them.
export {
  CircuitBreaker,
  CLOSED_PERMIT,
  type CircuitBreakerOptions,
  type CircuitDecision,
  type CircuitPermit,
  type CircuitSnapshot,
  type CircuitTransition,
} from "./breaker/circuit-breaker.js";
export { backoffDelay, withRetryAfter, DEFAULT_BACKOFF, type BackoffOptions, type Jitter } from "./backoff/backoff.js";
export {
  compileReflectionTemplate,
  REFLECTION_PLACEHOLDERS,
  type ReflectionPlaceholder,
  type ReflectionTemplate,
  type ReflectionValues,
} from "./reflection/templater.js";
export { cleanErrorText, defaultRedactor, errorMessageOf, type CleanOptions } from "./reflection/clean-error-text.js";
export { classifyError, retryAfterMsOf, DEFAULT_SUGGESTED_ACTIONS } from "./classify/classify-error.js";
export { ArgumentDepthError, argumentsFingerprint, canonicalJson, MAX_ARGUMENT_DEPTH } from "./idempotency/fingerprint.js";
export { isToolErrorShape } from "./errors/tool-error.js";
