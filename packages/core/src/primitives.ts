// `@retry-reflect/core/primitives`: the building blocks the plugin is made of, each usable on its
// own: backoff, the circuit breaker, classification, cleaning and redaction, fingerprints,
// templates and the brand check. The plugin does not need you to touch any of them.

export { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF, withRetryAfter } from "./backoff/backoff.js";
export { CircuitBreaker, type CircuitBreakerOptions, type CircuitSnapshot } from "./breaker/circuit-breaker.js";
export { CIRCUIT_BREAKER_DEFAULTS } from "./breaker/circuit-breaker-options.js";
export { classifyError, DEFAULT_SUGGESTED_ACTIONS, retryAfterMsOf } from "./classify/classify-error.js";
export { cleanToolError, type ToolErrorCleaning } from "./cleaning/clean-error.js";
export { type CleanOptions, cleanErrorText } from "./cleaning/clean-text.js";
export { errorMessageOf } from "./cleaning/error-message-of.js";
export { defaultRedactor } from "./cleaning/redactor.js";
export { hasBrand } from "./errors/brand.js";
export { isToolErrorShape } from "./errors/tool-error.js";
export { ArgumentDepthError, argumentsFingerprint, canonicalJson } from "./idempotency/fingerprint.js";
export { compileReflectionTemplate, type ReflectionTemplate } from "./texts/templater.js";
