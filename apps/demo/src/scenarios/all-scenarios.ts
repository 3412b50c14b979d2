import { circuitBreakerScenario } from "./circuit-breaker-scenario.js";
import { exitLoopScenario } from "./exit-loop-scenario.js";
import { idempotencyScenario } from "./idempotency-scenario.js";
import { outageScenario } from "./outage-scenario.js";
import { quotaScenario } from "./quota-scenario.js";
import type { Scenario } from "./scenario.js";
import { timeoutScenario } from "./timeout-scenario.js";
import { transientScenario } from "./transient-scenario.js";
import { weatherScenario } from "./weather-scenario.js";

/** The eight offline scenarios of the demo, in order (scenario 9, two replicas over Redis, has its own runner). */
export const ALL_SCENARIOS: readonly Scenario[] = [
  weatherScenario,
  transientScenario,
  circuitBreakerScenario,
  idempotencyScenario,
  quotaScenario,
  exitLoopScenario,
  timeoutScenario,
  outageScenario,
];
