import { defineConfig } from "tsup";

export default defineConfig({
  // One entry per audience; the names are the files in `dist` (`adapter-options` is `/adapter/options`).
  entry: {
    index: "src/index.ts",
    events: "src/events.ts",
    stores: "src/stores.ts",
    primitives: "src/primitives.ts",
    adapter: "src/adapter.ts",
    "adapter-options": "src/adapter-options.ts",
    "adapter-failures": "src/adapter-failures.ts",
    testing: "src/testing.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "es2022",
});
