import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { observeExecution, type ToolHooks } from "./tool-hooks.js";

/** `exit_loop({reason})`: a control-flow tool that ends the agent's loop (`returnDirect`). */
export function createExitLoopTool(hooks: ToolHooks = {}) {
  return tool((args) => observeExecution(hooks, "exit_loop", args, async () => `Loop ended: ${args.reason}`), {
    name: "exit_loop",
    description: "Ends the work loop when the task is complete. Call it last, once.",
    schema: z.object({ reason: z.string().describe("Why the loop can end") }),
    returnDirect: true,
  });
}
