// Why retry-reflect wins, ties or loses in each cell: the mechanism, in words. AGENTS.md prints it
// after each cell's verdict; the figures next to it are the run's own.
export const WHY: Readonly<Record<string, string>> = {
  baseline:
    'No faults, so nothing to win; the extra model calls are a cost of the defaults: `send_email` is a `write`, and a call without `idempotency_key` is refused (`IDEMPOTENCY_KEY_REQUIRED`, `requireKey: true`, `derive: "never"`) until the model adds one, one more model call per write task. With `derive: "always"` (the + timeouts row) the cost is gone. toolRetryMiddleware\'s few losses are the model\'s own slips (3 % of first calls): it retries a schema error in place and then hands back a text without the error.',
  "explicit-transient":
    "The 503s are retried in place with backoff, so the model sees a failure only when four attempts in a row fail (then a stop text: it gives up). toolRetryMiddleware does the same with three attempts; the plain agent spends a model call on each 503 and its model gives up sooner or later; ADK-style spends a model call on each and raises after three in a row.",
  "explicit-permanent":
    "A 403 is not recoverable: retry-reflect runs it once and tells the model to stop, the fewest tool executions and model calls of all. toolRetryMiddleware retries it in place (three executions per call) before the model gives up; ADK-style's default raises once a fourth failure in a row follows its three reflections, so many runs end with an error instead of an answer.",
  "implicit-transient":
    "Nobody sees a failure: the tool succeeds with a wrong temperature half the time, and every contestant passes it on. retry-reflect's `isFailure` (a check on results) is how a user makes such results failures; its defaults do nothing here. The extra model calls are the write tasks' key request (see baseline).",
  "implicit-permanent":
    "Every result is plausible and wrong: no contestant, and no policy that only sees errors, can do anything (see implicit-transient).",
  "invalid-arguments":
    'LangChain\'s schema validation names the valid cities; retry-reflect reflects the schema issue with them, the plain agent and ADK-style pass the raw error (which has them too), so the model corrects its call either way: a tie (plus the key request). toolRetryMiddleware retries the validation error in place and answers only "failed after 3 attempts with ToolInvocationError": the model must guess (it reconsiders its arguments on some of its calls).',
  hang: "The peers set no attempt timeout by default, so a hung call hangs them until the user's deadline. retry-reflect's default limit (60 s; the + timeouts row 10 s, the candidates 30 s and none) cuts the attempt off and retries it in place; the shorter the limit, the less time a hang costs.",
  "slow-but-fine":
    "Nothing fails: get_weather answers right after 20–50 s, and no contestant's defaults set a time limit, so every one waits for it (about 40 s more per task than the baseline): a tie (toolRetryMiddleware's losses are the model's slips, as in the baseline). A limit below the tool's time cuts off calls that would have answered: the + timeouts row (10 s, the core README's recipe) cuts off every execution, retries in place until its four attempts are spent and tells the model to stop, so it gives up on every task; the default attempt timeout section shows 30 s and 60 s.",
  "rate-limit":
    'retry-reflect and toolRetryMiddleware wait out the Retry-After in place (toolRetryMiddleware reads `retryAfterMs` too, its jitter sometimes lands a retry early). ADK-style answers each 429 with a model round trip and "do not repeat the exact same call": its model changes an argument that was right, or the three-in-a-row limit is reached, with the most model calls of all; the plain agent\'s model gives up on many of them.',
  "lost-write-response":
    "The email went out and its reply was lost. Every other contestant sends it again (the plain agent's and ADK-style's model, toolRetryMiddleware in place): a duplicate. retry-reflect retries in place behind the key and forwards the key to the service (`context.idempotencyKey`), which deduplicates. Against a service that ignores keys its in-place retry would send twice as well: the guard alone stops replays of completed writes and concurrent duplicates, not a lost reply.",
  "down-for-good":
    "A 503 on every call looks transient, so every contestant retries it; the task can only end in an honest give-up. retry-reflect gives up after its four attempts (and tells the model to stop), as fast as the fastest; the cost of a longer retry budget (FINDINGS A3) shows here as time and tool executions.",
  outage:
    "The service is down for 12 s. retry-reflect's four attempts (backoffs of 0.5, 1 and 2 s) span about 5 s, then it tells the model to stop (and by the fifth failure the circuit is open): the model gives up before the service is back. toolRetryMiddleware's message says nothing, so its model sometimes calls again, and a few of those calls land after the outage. The lever is a longer budget for that tool (`maxRetries`, `maxBackoffMs`); no default wins both this cell and explicit-permanent's early stop.",
};
