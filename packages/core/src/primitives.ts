// `@retry-reflect/core/primitives`: the building blocks the plugin is made of, each usable on its
// own: backoff, the circuit breaker, classification, cleaning and redaction, fingerprints,
// templates and the brand check. The plugin does not need you to touch any of them.

export { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF, withRetryAfter } from "./backoff/backoff.js";
export { CircuitBreaker, type CircuitBreakerOptions, type CircuitSnapshot } from "./breaker/circuit-breaker.js";
export { CIRCUIT_BREAKER_DEFAULTS } from "./breaker/circuit-breaker-options.js";
export { classifyError } from "./classify/classify-error.js";
export { errorMessageOf, retryAfterMsOf } from "./classify/error-signals.js";
export { cleanToolError, type ToolErrorCleaning } from "./cleaning/clean-error.js";
export { type CleanOptions, cleanErrorText, defaultRedactor } from "./cleaning/clean-text.js";
export { hasBrand } from "./errors/error-codes.js";
export { isToolErrorShape } from "./errors/tool-error.js";
export { ArgumentDepthError, argumentsFingerprint, canonicalJson } from "./idempotency/fingerprint.js";
export { DEFAULT_SUGGESTED_ACTIONS } from "./texts/model-texts.js";
export { compileReflectionTemplate, type ReflectionTemplate } from "./texts/templater.js";
