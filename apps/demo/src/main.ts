#!/usr/bin/env node
import { CliError, HELP_TEXT, parseArgs } from "./cli/parse-args.js";
import { colorsWanted, createStyle } from "./output/style.js";
import { runDemo } from "./runner/run-demo.js";

async function main(): Promise<number> {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    if (error instanceof CliError) {
      console.error(`demo: ${error.message}`);
      return 2;
    }
    throw error;
  }
  if (options.help) {
    console.log(HELP_TEXT);
    return 0;
  }
  const style = createStyle(options.color ?? colorsWanted(process.stdout));
  const result = await runDemo({
    sink: (line) => console.log(line),
    style,
    scenarioIds: options.scenarios,
  });
  return result.ok ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
