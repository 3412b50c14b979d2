/*
 * Attribute and metric names used by this package.
 *
 * The GenAI keys are copied from `@opentelemetry/semantic-conventions` 1.45.0 (its
 * `incubating` entry point), as OpenTelemetry's contrib GUIDELINES.md asks for unstable keys:
 * a copy cannot change under us when the conventions move. Our own keys live under
 * `retry_reflect.*`.
 */

// ---- OpenTelemetry semantic conventions (copied) ----

/** The name of the operation being performed (GenAI, development). */
export const ATTR_GEN_AI_OPERATION_NAME = "gen_ai.operation.name" as const;
/** Enum value "execute_tool" of `gen_ai.operation.name`. */
export const GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL = "execute_tool" as const;
/** Name of the tool utilized by the agent (GenAI, development). */
export const ATTR_GEN_AI_TOOL_NAME = "gen_ai.tool.name" as const;
/** The tool call identifier (GenAI, development). */
export const ATTR_GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id" as const;
/** The tool's description, as given to the model (GenAI semantic conventions, recommended). */
export const ATTR_GEN_AI_TOOL_DESCRIPTION = "gen_ai.tool.description" as const;
/** The tool's type: `function`, `extension` or `datastore` (GenAI semantic conventions, recommended). */
export const ATTR_GEN_AI_TOOL_TYPE = "gen_ai.tool.type" as const;
/** Parameters passed to the tool call: opt-in content (GenAI, development). */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments" as const;
/** The result returned by the tool call: opt-in content (GenAI, development). */
export const ATTR_GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result" as const;
/** Describes a class of error the operation ended with (stable). */
export const ATTR_ERROR_TYPE = "error.type" as const;
/** Fallback value of `error.type` when no better one is known (stable). */
export const ERROR_TYPE_VALUE_OTHER = "_OTHER" as const;

// ---- retry-reflect attributes (ours) ----

/** Attempt number of the tool in its scope when the call ended (2 = first retry). */
export const ATTR_RETRY_REFLECT_ATTEMPT = "retry_reflect.attempt" as const;
/** Attempts made inside this logical call (in-place retries included). */
export const ATTR_RETRY_REFLECT_ATTEMPTS = "retry_reflect.attempts" as const;
/** On an attempt's child span (`spanPerAttempt`): its place in the logical call (1, then 2 for the first in-place retry, ...). */
export const ATTR_RETRY_REFLECT_ATTEMPT_INDEX = "retry_reflect.attempt.index" as const;
/** How the logical call ended: `success`, `reflect`, `failed`, `aborted`, `interrupted`, `error`. */
export const ATTR_RETRY_REFLECT_OUTCOME = "retry_reflect.outcome" as const;
/** Why a `failed` call stopped: `not_recoverable`, `exhausted`, `circuit_open`. */
export const ATTR_RETRY_REFLECT_FAILURE_REASON = "retry_reflect.failure.reason" as const;
/** The structured error code of a `reflect` or `failed` call (`INVALID_ARGUMENTS`, ...). */
export const ATTR_RETRY_REFLECT_ERROR_CODE = "retry_reflect.error_code" as const;
/** State of the tool's circuit breaker: `closed`, `open`, `half-open`. */
export const ATTR_RETRY_REFLECT_CIRCUIT_STATE = "retry_reflect.circuit.state" as const;
/** True when the result was replayed from the idempotency store. */
export const ATTR_RETRY_REFLECT_REPLAYED = "retry_reflect.replayed" as const;
/** Set (true) when the call's result is the policy's `fallback`, standing in for a final failure. */
export const ATTR_RETRY_REFLECT_FALLBACK = "retry_reflect.fallback" as const;
/** The tool's declared side effect: `read`, `idempotent`, `write`. */
export const ATTR_RETRY_REFLECT_TOOL_EFFECT = "retry_reflect.tool.effect" as const;
/** The attempt-tracking scope of the call (one agent run, or `global`). */
export const ATTR_RETRY_REFLECT_SCOPE = "retry_reflect.scope" as const;
/** Retry mode of a `retry` event / metric point: `in_place` or `reflect`. */
export const ATTR_RETRY_REFLECT_MODE = "retry_reflect.mode" as const;
/** Prefix of the event fields carried by span events and log records. */
export const RETRY_REFLECT_FIELD_PREFIX = "retry_reflect." as const;

/** `retry_reflect.outcome` values. */
export const RETRY_REFLECT_OUTCOME_VALUE_SUCCESS = "success" as const;
export const RETRY_REFLECT_OUTCOME_VALUE_REFLECT = "reflect" as const;
export const RETRY_REFLECT_OUTCOME_VALUE_FAILED = "failed" as const;
export const RETRY_REFLECT_OUTCOME_VALUE_ABORTED = "aborted" as const;
export const RETRY_REFLECT_OUTCOME_VALUE_INTERRUPTED = "interrupted" as const;
export const RETRY_REFLECT_OUTCOME_VALUE_ERROR = "error" as const;

// ---- metrics ----

/** Histogram, seconds: duration of one logical tool call (in-place attempts and backoff included). */
export const METRIC_GEN_AI_EXECUTE_TOOL_DURATION = "gen_ai.execute_tool.duration" as const;
/** Counter, `{retry}`: "tool call failed, retrying" decisions (both modes). */
export const METRIC_RETRY_REFLECT_RETRIES = "retry_reflect.retries" as const;
/** Counter, `{reflection}`: calls that ended by handing the model a reflection prompt. */
export const METRIC_RETRY_REFLECT_REFLECTIONS = "retry_reflect.reflections" as const;
/** Counter, `{transition}`: circuit breaker state changes, by the state entered. */
export const METRIC_RETRY_REFLECT_CIRCUIT_TRANSITIONS = "retry_reflect.circuit.transitions" as const;
/** Counter, `{rejection}`: calls rejected without running because the circuit was open. */
export const METRIC_RETRY_REFLECT_CIRCUIT_REJECTIONS = "retry_reflect.circuit.rejections" as const;
/** Counter, `{wait}`: calls that met an open circuit and waited for its probe (`waitForRecovery`) instead of being turned away. */
export const METRIC_RETRY_REFLECT_CIRCUIT_WAITS = "retry_reflect.circuit.waits" as const;
/** Counter, `{replay}`: write calls answered from the idempotency store without running. */
export const METRIC_RETRY_REFLECT_IDEMPOTENCY_REPLAYS = "retry_reflect.idempotency.replays" as const;
/** Counter, `{retry}`: transient failures not retried in place because the tool's retry budget was spent. */
export const METRIC_RETRY_REFLECT_RETRY_BUDGET_SPENT = "retry_reflect.retry_budget.spent" as const;
