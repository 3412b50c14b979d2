import { jsonOf, textOf } from "../model/conversation.js";
import { createWeatherTool } from "../tools/weather-tool.js";
import { expectEqual, type Scenario } from "./scenario.js";
import { latestResult, mustStop, reportedError } from "./script-helpers.js";

/** Scenario 1, the reference example: kelvin → reflection → celsius → answer. */
export const weatherScenario: Scenario = {
  id: 1,
  title: "Reflection: the reference weather example (kelvin → celsius)",
  shortName: "reflection (kelvin)",
  intro: () => [
    "The model asks for kelvin; the weather service only knows celsius and fahrenheit.",
    "The plugin hands the model a reflection prompt; the model corrects its arguments.",
  ],
  tools: (services, hooks) => [createWeatherTool(services.weather.url, hooks)],
  script: (messages) => {
    const result = latestResult(messages);
    if (!result) return { toolCalls: [{ name: "get_weather", args: { city: "nyc", units: "kelvin" } }] };
    if (result.status === "error") {
      if (mustStop(result)) return { text: `Sorry, I could not get the weather: ${reportedError(result)}` };
      // The reflection quotes the service: "Invalid units. Supported: celsius, fahrenheit".
      const supported = /Supported: ([a-z]+)/i.exec(textOf(result))?.[1] ?? "celsius";
      return {
        text: `(reflecting) kelvin is not supported; the service lists ${supported} first, so I use it.`,
        toolCalls: [{ name: "get_weather", args: { city: "NYC", units: supported.toLowerCase() } }],
      };
    }
    const weather = jsonOf(result) as { temperature?: number; condition?: string } | undefined;
    return { text: `It is ${weather?.temperature ?? "?"} °C and ${weather?.condition ?? "unknown"} in New York City.` };
  },
  turns: [{ user: "What's the weather in NYC?" }],
  evaluate: (stats, services) => {
    const problems: string[] = [];
    expectEqual(problems, "reflections", stats.reflections, 1);
    expectEqual(problems, "tool executions", stats.toolExecutions, 2);
    expectEqual(problems, "model calls", stats.modelCalls, 3);
    expectEqual(problems, "weather service requests", services.weather.stats.requests, 2);
    const succeeded = stats.events.some((event) => event.type === "retry_succeeded" && event.fields.attempt === 2);
    if (!succeeded) problems.push('no "retry succeeded" event with attempt=2');
    if (!/22 °C/.test(stats.finalAnswer)) problems.push(`answer does not give 22 °C: ${stats.finalAnswer}`);
    return { outcome: problems.length === 0 ? "answered after 1 reflection: 22 °C, sunny" : "unexpected", problems };
  },
};
