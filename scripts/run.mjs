#!/usr/bin/env node
// The two commands a newcomer runs: `npm test` and `npm run demo` (plus `npm run bench`).
// Each installs with the pinned pnpm (frozen lockfile), builds with turbo, then does its job.
// Only Node.js 20 and npm are needed: pnpm comes through `npx --yes`.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const PNPM = ["npx", "--yes", "pnpm@12.4.2"];
const [command, ...rest] = process.argv.slice(2);

function run(argv, options = {}) {
  const result = spawnSync(argv[0], argv.slice(1), { cwd: root, stdio: "inherit", ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function step(label, argv) {
  console.log(`\n> ${label}`);
  const status = run(argv);
  if (status !== 0) {
    console.error(`\n${label} failed (exit ${status})`);
    process.exit(status);
  }
}

function install() {
  step("install", [...PNPM, "install", "--frozen-lockfile", "--reporter=append-only"]);
}

function build() {
  step("build", [...PNPM, "exec", "turbo", "run", "build", "--output-logs=errors-only"]);
}

switch (command) {
  case "test": {
    install();
    // Lint and format first: `npm run format` fixes what it reports.
    step("lint and format (biome ci)", [...PNPM, "exec", "biome", "ci", "--colors=off", "."]);
    build();
    step("typecheck", [...PNPM, "exec", "turbo", "run", "typecheck", "--output-logs=errors-only"]);
    const report = join(root, ".vitest-report.json");
    rmSync(report, { force: true });
    console.log("\n> vitest");
    const status = run([...PNPM, "exec", "vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...rest]);
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    if (existsSync(report)) {
      const json = JSON.parse(readFileSync(report, "utf8"));
      passed = json.numPassedTests ?? 0;
      failed = json.numFailedTests ?? 0;
      skipped = (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
    } else {
      failed = 1;
    }
    // The plain closing line CI reads.
    console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
    process.exit(status !== 0 ? status : failed > 0 ? 1 : 0);
    break;
  }
  case "demo": {
    install();
    build();
    process.exit(run(["node", "apps/demo/dist/main.js", ...rest]));
    break;
  }
  case "bench": {
    install();
    build();
    process.exit(run([...PNPM, "--filter", "@retry-reflect/bench", "run", "bench", ...rest]));
    break;
  }
  case "bench-node24": {
    install();
    build();
    process.exit(run([...PNPM, "--filter", "@retry-reflect/bench", "run", "bench:node24", ...rest]));
    break;
  }
  default:
    console.error("usage: node scripts/run.mjs test|demo|bench|bench-node24 [args...]");
    process.exit(2);
}
