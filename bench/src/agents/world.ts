// The tasks, and the services and tools they run against. One `World` per episode: its own
// services (the email outbox is where duplicate side effects are counted), its own faults.
import { tool } from "@langchain/core/tools";
import type { Clock } from "@retry-reflect/core";
import { injectFaults } from "@retry-reflect/core/testing";
import { getToolContext } from "@retry-reflect/langchain";
import type { StructuredTool } from "langchain";
import { z } from "zod";
import type { Cell } from "./cells.js";

/** A service several worlds share (the load section's): it decides each execution of its tool's calls. */
export interface SharedService {
  execute<R>(fn: () => Promise<R>): Promise<R>;
}

export const CITIES = ["paris", "london", "tokyo", "lima", "cairo", "oslo", "delhi", "quito"] as const;
export type City = (typeof CITIES)[number];

/** The kinds of task: a read, two reads that depend on each other, a read then a write. */
export type TaskKind = "lookup" | "two-step" | "write";
export const TASK_KINDS: readonly TaskKind[] = ["lookup", "two-step", "write"];

export interface Task {
  readonly id: number;
  readonly kind: TaskKind;
  readonly city: City;
  /** The true temperature: the right answer. */
  readonly temperature: number;
  /** two-step: the order whose destination is `city`. */
  readonly orderId: string;
  /** write: who gets the email. */
  readonly recipient: string;
  readonly prompt: string;
}

const capitalised = (city: string) => city[0]?.toUpperCase() + city.slice(1);

/** Task `id` of `kind`, its facts drawn from `random`. */
export function makeTask(id: number, kind: TaskKind, random: () => number): Task {
  const city = CITIES[Math.floor(random() * CITIES.length)] as City;
  const temperature = 5 + Math.floor(random() * 30);
  const orderId = `A-${1000 + id}`;
  const recipient = `user${id}@example.com`;
  const prompt =
    kind === "lookup"
      ? `What is the temperature in ${capitalised(city)}?`
      : kind === "two-step"
        ? `What is the temperature where order ${orderId} ships to?`
        : `Email ${recipient} the temperature in ${capitalised(city)}.`;
  return { id, kind, city, temperature, orderId, recipient, prompt };
}

/** The optional arguments of each tool's schema (the model sees the schemas; it adds one when a failure text names it). */
export const OPTIONAL_ARGUMENTS: Readonly<Record<string, readonly string[]>> = { send_email: ["idempotency_key"] };

/** Virtual latency of each service call (ms). */
export const TOOL_LATENCY_MS = { get_weather: 300, get_order: 300, send_email: 500 } as const;

export interface SentEmail {
  readonly to: string;
  readonly body: string;
  readonly at: number;
}

/** One episode's services and tools. */
export class World {
  /** Every email the email service delivered (a duplicate is a second one for the same task). */
  readonly outbox: SentEmail[] = [];
  /** Executions per tool: how many times the tool's code ran (faulted or not). */
  readonly executions: Record<string, number> = { get_weather: 0, get_order: 0, send_email: 0 };
  readonly tools: StructuredTool[];
  private readonly seenKeys = new Set<string>();

  constructor(
    readonly task: Task,
    readonly cell: Cell,
    private readonly clock: Clock,
    private readonly random: () => number,
    seed: number,
    /** get_weather's service, shared with other worlds (the load section); default: the world's own, faulted by the cell. */
    weatherService?: SharedService,
  ) {
    const plan = (target: string) => {
      const faults = cell.faults?.[target];
      return faults === undefined ? undefined : { faults, seed, clock, signal: () => getToolContext()?.signal };
    };
    // Executions are counted before the faults: a call the fault plan fails still reached the tool.
    const wrap = <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) => {
      const faults = plan(name);
      const faulty = faults === undefined ? fn : injectFaults(fn, faults);
      return async (...args: A): Promise<R> => {
        this.executions[name] = (this.executions[name] ?? 0) + 1;
        return faulty(...args);
      };
    };
    const weather = wrap("get_weather", (args: { city: City }) =>
      weatherService === undefined ? this.weather(args.city) : weatherService.execute(() => this.weather(args.city)),
    );
    const order = wrap("get_order", (args: { order_id: string }) => this.order(args.order_id));
    const send = wrap("send_email", (args: { to: string; subject: string; body: string; idempotency_key?: string }) => this.send(args));
    this.tools = [
      tool(async (args) => weather(args), {
        name: "get_weather",
        description: "The current temperature (°C) in a city.",
        schema: z.object({ city: z.enum(CITIES) }),
      }),
      tool(async (args) => order(args), {
        name: "get_order",
        description: "An order's shipping destination.",
        schema: z.object({ order_id: z.string() }),
      }),
      tool(async (args) => send(args), {
        name: "send_email",
        description: "Sends an email. Pass idempotency_key to make a re-send safe.",
        schema: z.object({ to: z.string(), subject: z.string(), body: z.string(), idempotency_key: z.string().optional() }),
        metadata: { effect: "write" },
      }),
    ];
  }

  private async weather(city: City): Promise<string> {
    await this.clock.sleep(TOOL_LATENCY_MS.get_weather);
    const truth = city === this.task.city ? this.task.temperature : 10 + (city.length % 7);
    const implicit = this.cell.implicitWrongResult;
    // An implicit fault: a plausible answer that is wrong (a stale cache, another station).
    const wrong = implicit !== undefined && this.random() < implicit;
    return JSON.stringify({ city, temperature_c: wrong ? truth + 7 : truth });
  }

  private async order(orderId: string): Promise<string> {
    await this.clock.sleep(TOOL_LATENCY_MS.get_order);
    if (orderId !== this.task.orderId) throw Object.assign(new Error(`404 Not Found: no order ${orderId}`), { status: 404 });
    return JSON.stringify({ order_id: orderId, ships_to: this.task.city });
  }

  /** The email service honours an Idempotency-Key, as payment and email APIs commonly do. */
  private async send(args: { to: string; body: string; idempotency_key?: string }): Promise<string> {
    await this.clock.sleep(TOOL_LATENCY_MS.send_email);
    const key = getToolContext()?.idempotencyKey ?? args.idempotency_key;
    if (key !== undefined && this.seenKeys.has(key)) return JSON.stringify({ status: "sent", deduplicated: true });
    if (key !== undefined) this.seenKeys.add(key);
    this.outbox.push({ to: args.to, body: args.body, at: this.clock.now() });
    return JSON.stringify({ status: "sent", message_id: `m-${this.outbox.length}` });
  }
}
