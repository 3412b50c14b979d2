// `@retry-reflect/core/events`: for observer and telemetry authors: the observer interface, the
// events it is told of (one type each, and their union), a call's start and end as observers that
// follow calls see them, each event's message, and the console logger's line for an event.

export {
  type AttemptTimedOutEvent,
  type CallEnd,
  type CallInfo,
  type CallRefusedEvent,
  type CallRejectedEvent,
  type CircuitClosedEvent,
  type CircuitHalfOpenedEvent,
  type CircuitOpenedEvent,
  EVENT_MESSAGES,
  type FallbackUsedEvent,
  type IdempotencyConflictEvent,
  type IdempotentReplayEvent,
  type RetriesExhaustedEvent,
  type RetryBudgetSpentEvent,
  type RetryEvent,
  type RetryReflectEvent,
  type RetryReflectObserver,
  type RetrySucceededEvent,
  type StoreErrorEvent,
  type WaitingBeforeRetryEvent,
} from "./events/events.js";
export { formatEvent } from "./events/notifier.js";
