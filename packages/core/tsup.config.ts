import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/primitives.ts", "src/adapter.ts", "src/testing.ts"],
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "es2022",
});
