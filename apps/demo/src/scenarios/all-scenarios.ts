import { circuitBreakerScenario } from "./circuit-breaker-scenario.js";
import { exitLoopScenario } from "./exit-loop-scenario.js";
import { idempotencyScenario } from "./idempotency-scenario.js";
import { quotaScenario } from "./quota-scenario.js";
import type { Scenario } from "./scenario.js";
import { timeoutScenario } from "./timeout-scenario.js";
import { transientScenario } from "./transient-scenario.js";
import { weatherScenario } from "./weather-scenario.js";

/** The seven scenarios of the demo, in order. */
export const ALL_SCENARIOS: readonly Scenario[] = [
  weatherScenario,
  transientScenario,
  circuitBreakerScenario,
  idempotencyScenario,
  quotaScenario,
  exitLoopScenario,
  timeoutScenario,
];
