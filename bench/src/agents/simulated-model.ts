// The simulated model: a seeded, written-down policy that drives a real `createAgent`. It plans
// the task's steps, reads each tool message as text (`perceive`), and reacts by the numbers in
// model-profile.ts. It knows nothing about the contestant: only what the messages say.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { Clock } from "@retry-reflect/core";
import type { Cell } from "./cells.js";
import { MODEL_PROFILE, type ModelProfile } from "./model-profile.js";
import { type City, OPTIONAL_ARGUMENTS, type Task } from "./world.js";

/** How the model reads a failed tool's text. */
export type Perception = "stop" | "key" | "hint" | "arguments" | "transient" | "permanent" | "opaque";

/**
 * The words the model reacts to, by feature: generic cues that any contestant's text may have
 * (an instruction not to call again, the valid values, error words of the HTTP and network kind),
 * never a phrase of one contestant. A test runs every cue over each contestant's actual texts and
 * fails when a cue matches the texts of one contestant family only. The cues are read over the
 * whole text, as a model reads it: no contestant's layout (JSON fields, headings) is parsed.
 */
export const CUES = {
  /** An instruction not to call the tool again ("do not call it again", "do not attempt to use … again"). */
  stop: [/\b(?:do not|don't)\b[^.\n]*\bagain\b/i],
  /** The valid values of an argument. */
  hint: [/expected one of/i, /valid values/i, /allowed values/i],
  /** A transient-looking error. */
  transient: [
    /\b50[234]\b/,
    /unavailable/i,
    /timed? ?out\b|did not answer within/i,
    /\b429\b|too many requests|rate.?limit/i,
    /ECONNRESET|socket hang up|connection reset/i,
    /overloaded/i,
    /in progress/i,
  ],
  /** A permanent-looking error. */
  permanent: [/\b40[13]\b/, /forbidden/i, /unauthori[sz]ed|not authori[sz]ed/i],
  /** An argument error without the valid values. */
  arguments: [/\binvalid\b/i, /did not match/i, /\bschema\b/i, /validation/i, /bad request|\b400\b/i],
} as const satisfies Record<string, readonly RegExp[]>;

const has = (text: string, cues: readonly RegExp[]) => cues.some((cue) => cue.test(text));

/** A text as a model reads it: the escapes of a JSON string (`\\n`, `\\"`) read as what they stand for. */
export function readable(text: string): string {
  return text.replace(/\\n/g, "\n").replace(/\\"/g, '"');
}

/**
 * The category of a failure text: a stop instruction first, then an optional argument of the tool
 * that the text names and the call left out (`missing`: names from the tool's schema, which every
 * contestant's model sees), then what the error words say, most specific first.
 */
export function perceive(raw: string, missing: readonly string[] = []): Perception {
  const text = readable(raw);
  if (has(text, CUES.stop)) return "stop";
  if (missing.some((name) => text.includes(name))) return "key";
  return causeOf(text);
}

/** What the error words of a text say (what a model that ignores an instruction goes by). */
export function causeOf(raw: string): Exclude<Perception, "stop" | "key"> {
  const text = readable(raw);
  if (has(text, CUES.hint)) return "hint";
  if (has(text, CUES.transient)) return "transient";
  if (has(text, CUES.permanent)) return "permanent";
  if (has(text, CUES.arguments)) return "arguments";
  return "opaque";
}

const COUNTRY: Readonly<Record<City, string>> = {
  paris: "France",
  london: "UK",
  tokyo: "Japan",
  lima: "Peru",
  cairo: "Egypt",
  oslo: "Norway",
  delhi: "India",
  quito: "Ecuador",
};
const capitalised = (city: string) => city[0]?.toUpperCase() + city.slice(1);

type Call = { readonly name: string; readonly args: Record<string, unknown> };
type Reply = { readonly text: string } | { readonly call: Call };

/** What the model knows and remembers within one episode. */
export class Brain {
  modelCalls = 0;
  private processed = 0;
  private shipsTo: City | undefined;
  private temperature: number | undefined;
  private sent = false;
  private recheck = false;
  private doubted = false;
  private key: string | undefined;
  private keyCounter = 0;
  private weatherCalls = 0;
  private readonly failures = new Map<string, number>();
  private readonly last = new Map<string, Record<string, unknown>>();
  private pending: { readonly tool: string; readonly text: string } | undefined;
  private nextId = 1;

  constructor(
    readonly task: Task,
    readonly cell: Cell,
    readonly clock: Clock,
    private readonly random: () => number,
    readonly profile: ModelProfile = MODEL_PROFILE,
    private readonly onFailureText?: (text: string) => void,
  ) {}

  callId(): string {
    return `call_${this.nextId++}`;
  }

  /** The model's next message, from the conversation so far and the tools it was given. */
  reply(messages: readonly BaseMessage[], tools: readonly string[]): Reply {
    this.modelCalls++;
    for (; this.processed < messages.length; this.processed++) {
      const message = messages[this.processed];
      if (message !== undefined && ToolMessage.isInstance(message)) this.read(message);
    }
    if (this.modelCalls > this.profile.maxModelCalls) return this.giveUp("I ran out of attempts");
    const pending = this.pending;
    this.pending = undefined;
    const call = pending === undefined ? this.plan() : this.react(pending.tool, pending.text);
    if ("text" in call) return call;
    if (!tools.includes(call.call.name)) return this.giveUp(`the tool ${call.call.name} is not available`);
    this.last.set(call.call.name, call.call.args);
    return call;
  }

  private read(message: ToolMessage): void {
    const name = message.name ?? "";
    const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
    const result = parse(text);
    if (name === "get_weather" && typeof result?.temperature_c === "number") {
      this.temperature = result.temperature_c;
      if (!this.doubted && this.random() < this.profile.doubtRate) {
        this.doubted = true;
        this.recheck = true;
      }
    } else if (name === "get_order" && typeof result?.ships_to === "string") {
      this.shipsTo = result.ships_to as City;
    } else if (name === "send_email" && result?.status === "sent") {
      this.sent = true;
    } else {
      this.failures.set(name, (this.failures.get(name) ?? 0) + 1);
      this.onFailureText?.(text);
      this.pending = { tool: name, text };
      return;
    }
    this.failures.set(name, 0);
  }

  /** The next step of the task when the last step went well. */
  private plan(): Reply {
    const { task } = this;
    if (task.kind === "two-step" && this.shipsTo === undefined) return this.call("get_order", { order_id: task.orderId });
    if (this.temperature === undefined || this.recheck) {
      this.recheck = false;
      return this.weather();
    }
    if (task.kind === "write" && !this.sent) {
      // The tool's description offers a key: some models pass one on their first send, unasked (no draw at 0).
      const rate = this.profile.proactiveKeyRate;
      const first = !this.last.has("send_email");
      if (first && this.key === undefined && rate > 0 && this.random() < rate) this.key = this.newKey();
      return this.call("send_email", this.email());
    }
    return { text: `ANSWER: ${this.temperature} °C${task.kind === "write" ? ". The email is sent." : ""}` };
  }

  private react(tool: string, text: string): Reply {
    if ((this.failures.get(tool) ?? 0) >= this.profile.patiencePerTool) return this.giveUp(`${tool} kept failing`);
    const optional = OPTIONAL_ARGUMENTS[tool] ?? [];
    const given = this.last.get(tool) ?? {};
    return this.reactTo(
      tool,
      text,
      perceive(
        text,
        optional.filter((name) => !(name in given)),
      ),
    );
  }

  private reactTo(tool: string, text: string, perception: Perception): Reply {
    const { reactions } = this.profile;
    const same = () => this.call(tool, this.last.get(tool) ?? {});
    const chance = (p: number) => this.random() < p;
    switch (perception) {
      case "stop":
        // Told to stop, it gives up; else it goes by what the error says.
        return chance(reactions.stop.giveUp) ? this.giveUp(`${tool} failed`) : this.reactTo(tool, text, causeOf(text));
      case "key":
        // (No draw at probability 1: the episodes of the committed numbers stay as they were.)
        if (reactions.idempotencyKey.addWhenAsked < 1 && !chance(reactions.idempotencyKey.addWhenAsked)) return same();
        this.key ??= this.newKey();
        return this.call(tool, { ...(this.last.get(tool) ?? {}), idempotency_key: this.key });
      case "hint":
        return chance(reactions.hint.fix) ? this.corrected(tool) : same();
      case "arguments":
        // Without the valid values it guesses from the schema it was given: right, else it sends the call as it was.
        return chance(reactions.argumentsWithoutHint.fix) ? this.corrected(tool) : same();
      case "transient":
        return this.retryAfterFailure(tool);
      case "permanent":
        return chance(reactions.permanent.giveUp) ? this.giveUp(`${tool} is not permitted`) : same();
      case "opaque":
        // Nothing to go on: it calls again, reconsidering its arguments first some of the time, or gives up.
        if (!chance(reactions.opaque.retry)) return this.giveUp(`${tool} failed`);
        return chance(reactions.opaque.reconsiderArguments) ? this.corrected(tool) : this.retryAfterFailure(tool);
    }
  }

  /** A failure that is no argument problem: the model calls again (a write: sends again), or gives up. */
  private retryAfterFailure(tool: string): Reply {
    const { reactions } = this.profile;
    if (tool === "send_email") {
      if (this.random() >= reactions.writeFailed.resend) return this.giveUp("the email could not be sent");
      if (this.key !== undefined && this.random() >= reactions.idempotencyKey.keepOnResend) this.key = this.newKey();
      return this.call(tool, this.email());
    }
    return this.random() < reactions.transient.retry ? this.call(tool, this.last.get(tool) ?? {}) : this.giveUp(`${tool} is unavailable`);
  }

  private weather(): Reply {
    const city = this.task.kind === "two-step" ? (this.shipsTo ?? this.task.city) : this.task.city;
    const first = this.weatherCalls++ === 0;
    const slip = first && (this.cell.modelSlipsFirst === true || this.random() < this.profile.slipRate);
    return this.call("get_weather", { city: slip ? `${capitalised(city)}, ${COUNTRY[city]}` : city });
  }

  private corrected(tool: string): Reply {
    return tool === "get_weather" ? this.call(tool, { city: this.shipsTo ?? this.task.city }) : this.call(tool, this.last.get(tool) ?? {});
  }

  private email(): Record<string, unknown> {
    const body = `It is ${this.temperature} °C in ${capitalised(this.task.city)}.`;
    return { to: this.task.recipient, subject: "The temperature", body, ...(this.key === undefined ? {} : { idempotency_key: this.key }) };
  }

  private newKey(): string {
    return `email-${this.task.id}-${++this.keyCounter}`;
  }

  private call(name: string, args: Record<string, unknown>): Reply {
    return { call: { name, args } };
  }

  private giveUp(reason: string): Reply {
    return { text: `UNABLE: I could not finish the task (${reason}).` };
  }
}

function parse(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The chat model `createAgent` drives: each call takes `modelLatencyMs` of virtual time. */
export class SimulatedModel extends BaseChatModel {
  private boundTools: readonly string[] = [];

  constructor(readonly brain: Brain) {
    super({});
  }

  _llmType(): string {
    return "simulated";
  }

  override bindTools(tools: readonly unknown[]): SimulatedModel {
    const bound = new SimulatedModel(this.brain);
    bound.boundTools = tools.map((tool) => (typeof tool === "object" && tool !== null && "name" in tool ? String(tool.name) : "?"));
    return bound;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    await this.brain.clock.sleep(this.brain.profile.modelLatencyMs);
    const reply = this.brain.reply(messages, this.boundTools);
    const message =
      "text" in reply
        ? new AIMessage({ content: reply.text })
        : new AIMessage({
            content: "",
            tool_calls: [{ id: this.brain.callId(), name: reply.call.name, args: reply.call.args, type: "tool_call" }],
          });
    return { generations: [{ text: "text" in reply ? reply.text : "", message }] };
  }
}
