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

// The adapters' tests once more against the oldest version of their framework that the peer range
// allows, a devDependency alias (the newest is the devDependency itself): `<package>-oldest`.
const OLDEST = [
  { dir: "packages/mastra", name: "@mastra/core" },
  { dir: "packages/openai-agents", name: "@openai/agents" },
];

// The one file that runs replicas in child processes (8, started once for the file: ~30 s, more than
// a core's worth of CPU at times) is a project of its own that starts first, beside other packages' files.
const PROCESSES = "packages/redis/test/multi-process.test.ts";

// Projects start in this order (the others after them, in Vitest's order): the ones whose files
// take longest first, so that on 2 cores the run does not end with one long file alone on one core,
// as it did when the LangChain memory test (then ~60 s) started 190 s in and the Redis files (~150 s
// in all) came last. The Redis files start once `redis-processes` is over (it is the first), not
// beside it: their stores give each command a limit, which 8 busy replicas could make them miss.
const PROJECT_ORDER = ["redis-processes", "langchain-adapter", "bench", "redis", "mcp"];

// The files measured longest (a fresh clone on 2 cores), longest first within their project.
// Without durations of its own (a fresh clone, CI) Vitest runs a project's larger files first,
// which started failover-processes last of all, and the run ended with it alone on one core.
const LONGEST = [
  "packages/langchain-adapter/test/long-lived-memory.test.ts",
  "bench/test/agents.test.ts",
  "packages/mcp/test/server-idempotency-http.test.ts",
  "packages/redis/test/fleet-learns.test.ts",
  "packages/redis/test/failover.test.ts",
  "packages/redis/test/failover-processes.test.ts",
  "packages/redis/test/cluster-processes.test.ts",
  "packages/redis/test/silent-subscription.test.ts",
].map(here);

/** Projects in `PROJECT_ORDER`, then the others in Vitest's order; in each, the files of `LONGEST` first, then Vitest's order. */
class LongestFirst extends BaseSequencer {
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
    const order = (name: string) => {
      const index = PROJECT_ORDER.indexOf(name);
      return index < 0 ? PROJECT_ORDER.length : index;
    };
    return [...projects].sort(([a], [b]) => order(a) - order(b)).flatMap(([, project]) => project.sort((a, b) => rank(a) - rank(b)));
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
    sequence: { sequencer: LongestFirst },
    projects: [
      ...packages.map((dir) => ({
        extends: true,
        test: {
          name: dir.slice(dir.lastIndexOf("/") + 1),
          include: [`${dir}/test/**/*.test.ts`],
          exclude: [...configDefaults.exclude, PROCESSES],
          // The examples run side by side (`describe.concurrent`), each its own process: two at a
          // time, so that their start-up (tsx, the sources) does not starve the other worker's
          // tests of a core for long (the Redis files give commands limits of 50 ms).
          ...(dir === "examples" ? { maxConcurrency: 2 } : {}),
        },
      })),
      { extends: true, test: { name: "redis-processes", include: [PROCESSES] } },
      ...OLDEST.map(({ dir, name }) => ({
        extends: true,
        resolve: { alias: [{ find: new RegExp(`^${name}(?=/|$)`), replacement: `${name}-oldest` }] },
        test: {
          name: `${dir.slice(dir.lastIndexOf("/") + 1)}-oldest`,
          include: [`${dir}/test/**/*.test.ts`],
          // test/peer-range.test.ts checks that the alias took effect.
          env: { RETRY_REFLECT_OLDEST: "1" },
        },
      })),
    ],
  },
});
