// The failure texts each contestant hands the model, collected from real episodes of the grid
// (what the perception test runs the rules over).

import { seededRandom } from "@retry-reflect/core/testing";
import type { Cell } from "./cells.js";
import type { Contestant } from "./contestants.js";
import { runAgentEpisode } from "./episode.js";
import { hashName, mix, runsIn } from "./run-grid.js";
import { makeTask, TASK_KINDS } from "./world.js";

/** Every distinct failure text of each contestant over `tasks` tasks of each cell (seeded as the grid is). */
export async function collectFailureTexts(
  cells: readonly Cell[],
  contestants: readonly Contestant[],
  tasks: number,
  seed = 1,
): Promise<Map<string, Set<string>>> {
  const texts = new Map<string, Set<string>>();
  for (const contestant of contestants) {
    const own = new Set<string>();
    texts.set(contestant.name, own);
    for (const cell of cells) {
      if (!runsIn(contestant, cell)) continue;
      const kinds = cell.kinds ?? TASK_KINDS;
      for (let task = 0; task < tasks; task++) {
        const spec = makeTask(task, kinds[task % kinds.length] ?? "lookup", seededRandom(mix(seed, hashName(cell.name), task)));
        await runAgentEpisode(cell, contestant, spec, mix(seed, hashName(cell.name), task, 0, 7), {
          onFailureText: (text) => own.add(text),
        });
      }
    }
  }
  return texts;
}
