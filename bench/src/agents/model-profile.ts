// The simulated model's behaviour, in one place: change a number here and rerun
// `npm run bench:agents` to see how the results move. Every probability is drawn from the
// episode's seeded generator, so a run is reproducible from its seed.
//
// The model reads what comes back from a tool the way a model reads text: it looks for words.
// `perceive` (simulated-model.ts) sorts a tool message into one of the categories below by generic
// cues (`CUES`), never by a phrase of one contestant; the reactions say what the model does next.
// Nothing here knows which contestant produced the text.

export const MODEL_PROFILE = {
  /** Virtual time one model call takes (ms). */
  modelLatencyMs: 1_500,
  /** The most model calls in one task before the model answers with what it has (a give-up). */
  maxModelCalls: 14,
  /** Consecutive failures of one tool after which the model stops trying it and gives up. */
  patiencePerTool: 6,

  /** First call of a tool with a slip in its arguments ("Paris, France" for "paris"), any task. */
  slipRate: 0.03,
  /** A plausible result the model doubts and checks once more by calling again (implicit faults). */
  doubtRate: 0.1,
  /**
   * Its first send of a write whose description offers a key ("Pass idempotency_key to make a
   * re-send safe") passes one unasked. 0: it never does (the committed run), so only a contestant
   * that asks for a key (or gives the service one itself) can pass the lost-write cell; 1: always.
   */
  proactiveKeyRate: 0,

  reactions: {
    /** An instruction not to call the tool again ("do not … again"): the model gives up (else it goes by the error words). */
    stop: { giveUp: 0.95 },
    /** An error that names the valid values ("expected one of …"): the model corrects the argument. */
    hint: { fix: 0.95 },
    /** An argument error without the valid values: a right guess from the tool's schema, else the same call again. */
    argumentsWithoutHint: { fix: 0.5 },
    /** A transient-looking error (503, timeout, 429, connection reset): the model calls again. */
    transient: { retry: 0.75 },
    /** A permanent-looking error (403, forbidden): most models give up; some try again. */
    permanent: { giveUp: 0.6 },
    /** A text with no detail ("failed after 3 attempts with ToolInvocationError"): the model calls again (reconsidering its arguments first some of the time), or gives up. */
    opaque: { retry: 0.5, reconsiderArguments: 0.3 },
    /** A write that failed (the model cannot know whether it went out): the model sends it again. */
    writeFailed: { resend: 0.85 },
    /** A failure text names an optional argument of the tool that the call left out (send_email's `idempotency_key`): the model adds it (else sends as before); on a re-send it keeps the key (else a new one). */
    idempotencyKey: { addWhenAsked: 1, keepOnResend: 0.8 },
  },
} as const;

type Widen<T> = { readonly [K in keyof T]: T[K] extends number ? number : Widen<T[K]> };

/** The model's numbers (the shape of MODEL_PROFILE, any values). */
export type ModelProfile = Widen<typeof MODEL_PROFILE>;

/**
 * MODEL_PROFILE with some numbers changed, from `--profile=reactions.transient.retry=0.95,slipRate=0`:
 * each path must name a number of the profile; probabilities (under `reactions`, or `…Rate`) stay in [0, 1].
 */
export function withOverrides(base: ModelProfile, spec: string): ModelProfile {
  const copy = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  for (const entry of spec.split(",").filter((part) => part.trim() !== "")) {
    const [path = "", raw = ""] = entry.split("=").map((part) => part.trim());
    const keys = path.split(".");
    const last = keys.pop() ?? "";
    let holder: Record<string, unknown> = copy;
    for (const key of keys) {
      const next = holder[key];
      if (typeof next !== "object" || next === null) throw new Error(`--profile: ${path} is not a number of the model profile`);
      holder = next as Record<string, unknown>;
    }
    if (typeof holder[last] !== "number") throw new Error(`--profile: ${path} is not a number of the model profile`);
    const value = Number(raw);
    const probability = keys[0] === "reactions" || last.endsWith("Rate");
    if (raw === "" || !Number.isFinite(value) || value < 0 || (probability && value > 1)) {
      throw new Error(
        `--profile: ${path} expects ${probability ? "a probability in [0, 1]" : "a number >= 0"}, got ${JSON.stringify(raw)}`,
      );
    }
    holder[last] = value;
  }
  return copy as unknown as ModelProfile;
}
