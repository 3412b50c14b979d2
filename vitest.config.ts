import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests run on the sources: each workspace package resolves to its `src`, so a change is
// tested without a rebuild. `npm test` still builds first, so the dist outputs are checked too.
const alias = {
  "@retry-reflect/core/testing": here("./packages/core/src/testing.ts"),
  "@retry-reflect/core/primitives": here("./packages/core/src/primitives.ts"),
  "@retry-reflect/core/adapter": here("./packages/core/src/adapter.ts"),
  "@retry-reflect/core": here("./packages/core/src/index.ts"),
  "@retry-reflect/langchain": here("./packages/langchain-adapter/src/index.ts"),
  "@retry-reflect/ai-sdk": here("./packages/ai-sdk/src/index.ts"),
  "@retry-reflect/mcp": here("./packages/mcp/src/index.ts"),
  "@retry-reflect/otel": here("./packages/otel/src/index.ts"),
  "@retry-reflect/redis": here("./packages/redis/src/index.ts"),
};

export default defineConfig({
  resolve: { alias },
  test: {
    // Tests live in each package's `test/` folder, never in `src/` (scripts/run.mjs checks it).
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "bench/test/**/*.test.ts"],
    testTimeout: 20_000,
    pool: "forks",
  },
});
