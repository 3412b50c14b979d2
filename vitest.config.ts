import { existsSync, readdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests run on the sources: each workspace package resolves to its `src`, so a change is
// tested without a rebuild. `npm test` still builds first, so the dist outputs are checked too.
const alias = {
  "@retry-reflect/core/testing": here("./packages/core/src/testing.ts"),
  "@retry-reflect/core/primitives": here("./packages/core/src/primitives.ts"),
  "@retry-reflect/core/events": here("./packages/core/src/events.ts"),
  "@retry-reflect/core/stores": here("./packages/core/src/stores.ts"),
  "@retry-reflect/core/adapter/options": here("./packages/core/src/adapter-options.ts"),
  "@retry-reflect/core/adapter/failures": here("./packages/core/src/adapter-failures.ts"),
  "@retry-reflect/core/adapter": here("./packages/core/src/adapter.ts"),
  "@retry-reflect/core": here("./packages/core/src/index.ts"),
  "@retry-reflect/langchain": here("./packages/langchain-adapter/src/index.ts"),
  "@retry-reflect/ai-sdk": here("./packages/ai-sdk/src/index.ts"),
  "@retry-reflect/mastra": here("./packages/mastra/src/index.ts"),
  "@retry-reflect/mcp": here("./packages/mcp/src/index.ts"),
  "@retry-reflect/openai-agents": here("./packages/openai-agents/src/index.ts"),
  "@retry-reflect/otel": here("./packages/otel/src/index.ts"),
  "@retry-reflect/redis": here("./packages/redis/src/index.ts"),
};

// Tests live in each package's `test/` folder, never in `src/` (scripts/run.mjs checks it): one
// Vitest project per workspace package that has one (packages/*, apps/*, bench, examples).
const packages = [
  ...["packages", "apps"].flatMap((parent) => readdirSync(here(parent)).map((name) => `${parent}/${name}`)),
  "bench",
  "examples",
].filter((dir) => existsSync(here(`${dir}/test`)));

// The one file that runs replicas in child processes (up to 8 at once, ~35 s, more than a core's
// worth of CPU) is a project of its own that starts first, beside other packages' files. The other
// Redis files (whose stores give each command 100 ms) run at the end, after it, not beside it.
const PROCESSES = "packages/redis/test/multi-process.test.ts";

// The files measured longest (a fresh clone on 2 cores), longest first. Without durations of its
// own (a fresh clone, CI) Vitest runs a project's larger files first, which started
// failover-processes (26 s) last of all, 164 s in, and the run ended with it alone on one core.
const LONGEST = [
  "packages/redis/test/failover.test.ts",
  "packages/redis/test/failover-processes.test.ts",
  "packages/redis/test/fleet-learns.test.ts",
  "packages/redis/test/silent-subscription.test.ts",
  "packages/redis/test/cluster-processes.test.ts",
].map(here);

/** Projects run one after another (Vitest's order), `redis-processes` first; in each, the files of `LONGEST` first, then Vitest's order. */
class ProcessesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = LONGEST.indexOf(file.moduleId);
      return index < 0 ? LONGEST.length : index;
    };
    const projects = new Map<string, TestSpecification[]>();
    for (const file of sorted) {
      const name = file.project.name;
      const project = projects.get(name);
      if (project === undefined) projects.set(name, [file]);
      else project.push(file);
    }
    const first = (name: string) => (name === "redis-processes" ? 0 : 1);
    return [...projects].sort(([a], [b]) => first(a) - first(b)).flatMap(([, project]) => project.sort((a, b) => rank(a) - rank(b)));
  }
}

export default defineConfig({
  resolve: { alias },
  test: {
    testTimeout: 20_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: 1 on these 2-core machines.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A worker process runs many test files of one package (projects never share a worker): the
    // libraries they import (LangChain, the AI SDK, MCP, OpenTelemetry, Redis clients) load once per
    // worker, not once per file, which was half of Vitest's time (a new process per file, each
    // importing them again). Each file still gets fresh mocks, config and its own module; the
    // package's sources are shared within the worker, as they are in one process of a user's.
    isolate: false,
    sequence: { sequencer: ProcessesFirst },
    projects: [
      ...packages.map((dir) => ({
        extends: true,
        test: {
          name: dir.slice(dir.lastIndexOf("/") + 1),
          include: [`${dir}/test/**/*.test.ts`],
          exclude: [...configDefaults.exclude, PROCESSES],
        },
      })),
      { extends: true, test: { name: "redis-processes", include: [PROCESSES] } },
    ],
  },
});
