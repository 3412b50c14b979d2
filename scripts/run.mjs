#!/usr/bin/env node
// The two commands a newcomer runs: `npm test` and `npm run demo` (plus `npm run bench`).
// Each installs with the pinned pnpm (frozen lockfile), builds with turbo, then does its job.
// Only Node.js 20 and npm are needed: pnpm comes through `npx --yes`.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** When the command started: its total includes finding pnpm. */
const started = Date.now();
const root = fileURLToPath(new URL("..", import.meta.url));
const PNPM_VERSION = "12.4.2";
const [command, ...rest] = process.argv.slice(2);

/** What each command does, printed first (before pnpm is looked for): the reader knows at once what is coming. */
const PLANS = {
  test: "npm test: install, lint, build and typecheck, package checks, then every test (about 5 minutes on 2 cores)",
  demo: [
    "retry-reflect demo: an agent whose tools fail in eight ways (a 503, bad arguments, a dead service, a write",
    "retried, an outage...), handled by retry-reflect, offline with a scripted model.",
    "Steps: install, build (about 1 minute on a fresh clone), then the demo.",
  ].join("\n"),
};
if (PLANS[command]) console.log(PLANS[command]);

// Colours only on a terminal: when the output goes to a pipe, a file or a CI log, every child
// (pnpm, turbo, tsup, vitest, publint, attw) is told to print plain text. Some of them turn colours
// on by themselves when `CI` is set (picocolors, tinyrainbow) or always (attw), so NO_COLOR alone
// or FORCE_COLOR alone is not enough: both are set.
const plain = process.stdout.isTTY !== true;
const plainEnv = plain ? { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } : process.env;

/**
 * The pinned pnpm, found once. `npx --yes pnpm@12.4.2` takes ~2 s a call (npx checks its cache every
 * time), while pnpm 12 itself, a native binary, starts in ~0.1 s; `npm test` calls pnpm ~25 times
 * (install, turbo, biome, vitest, and pack/publint/attw per package). So npx is asked once where
 * its pnpm@12.4.2 is, and that binary runs from then on; when it cannot be found or is not exactly
 * that version, every call goes through npx as before. Its folder goes first on the children's PATH, as
 * npx puts it: turbo looks for the package manager's binary there.
 */
function pinnedPnpm() {
  const viaNpx = ["npx", "--yes", `pnpm@${PNPM_VERSION}`];
  const found = spawnSync("npx", ["--yes", "-p", `pnpm@${PNPM_VERSION}`, "sh", "-c", "command -v pnpm"], {
    cwd: root,
    env: plainEnv,
    encoding: "utf8",
  });
  const binary = found.status === 0 ? found.stdout.trim() : "";
  if (binary === "") return viaNpx;
  const version = spawnSync(binary, ["--version"], { cwd: root, env: plainEnv, encoding: "utf8" });
  return version.status === 0 && version.stdout.trim() === PNPM_VERSION ? [binary] : viaNpx;
}

const PNPM = pinnedPnpm();
const childEnv = PNPM.length === 1 ? { ...plainEnv, PATH: `${dirname(PNPM[0])}${delimiter}${plainEnv.PATH ?? ""}` } : plainEnv;

function run(argv, options = {}) {
  const result = spawnSync(argv[0], argv.slice(1), { cwd: root, stdio: "inherit", env: childEnv, ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/**
 * Runs each command with its output kept, as many at a time as there are cores; resolves to each
 * one's `{ status, output }`, in the commands' order.
 */
async function runConcurrently(commands) {
  const results = [];
  let next = 0;
  const worker = async () => {
    while (next < commands.length) {
      const index = next++;
      const argv = commands[index];
      results[index] = await new Promise((resolve) => {
        const child = spawn(argv[0], argv.slice(1), { cwd: root, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
        let output = "";
        child.stdout.on("data", (chunk) => {
          output += chunk;
        });
        child.stderr.on("data", (chunk) => {
          output += chunk;
        });
        child.on("error", (error) => resolve({ status: 1, output: `${output}${error.message}\n` }));
        child.on("close", (status) => resolve({ status: status ?? 1, output }));
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), commands.length) }, worker));
  return results;
}

/** Where the wall time of a command went, step by step: printed as its last lines. */
const times = [];

/** Runs `work`, keeps its wall time under `label` and prints it (a progress line); `work` may be async. */
async function timed(label, work) {
  const start = Date.now();
  try {
    return await work();
  } finally {
    const seconds = `${((Date.now() - start) / 1000).toFixed(1)} s`;
    times.push(`${label} ${seconds}`);
    console.log(`${label}: ${seconds}`);
  }
}

function printTimes() {
  console.log(`wall time: ${times.join(", ")}; total ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Seconds since the command started, for the progress lines. */
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

async function step(label, argv) {
  console.log(`\n> ${label} (at ${elapsed()})`);
  const status = await timed(label, () => run(argv));
  if (status !== 0) {
    console.error(`\n${label} failed (exit ${status})`);
    printTimes();
    process.exit(status);
  }
}

async function install() {
  console.log(`\npnpm ${PNPM_VERSION}: ${PNPM.join(" ")}`);
  await step("install", [...PNPM, "install", "--frozen-lockfile", "--reporter=append-only"]);
}

async function build() {
  // A few lines per package as it builds (tsup runs with --silent): progress, and errors in full.
  await step("build", [...PNPM, "exec", "turbo", "run", "build", "--output-logs=new-only"]);
}

/** Prints the Node.js this script runs on and the one its children get from PATH; they must agree. */
function nodeVersions() {
  console.log(`\n> Node.js`);
  const child = spawnSync("node", ["-p", "process.version"], { cwd: root, env: childEnv, encoding: "utf8" });
  const childVersion = child.error ? `not found (${child.error.message})` : child.stdout.trim();
  console.log(`scripts/run.mjs runs on Node.js ${process.version} (${process.execPath})`);
  console.log(`\`node\` on PATH (pnpm, turbo, vitest and the packages' scripts) is ${childVersion}`);
  if (childVersion !== process.version) {
    console.error(`\nNode.js versions differ: put the Node.js you mean to test with first on PATH and run \`npm test\` again.`);
    process.exit(1);
  }
}

// The workspace, as pnpm-workspace.yaml lists it (packages/*, apps/*, bench, examples).
function workspacePackages() {
  const dirs = [];
  for (const parent of ["packages", "apps"]) {
    for (const entry of readdirSync(join(root, parent), { withFileTypes: true })) {
      if (entry.isDirectory() && existsSync(join(root, parent, entry.name, "package.json"))) dirs.push(`${parent}/${entry.name}`);
    }
  }
  dirs.push("bench", "examples");
  return dirs.map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) }));
}

/** One rule for tests: `*.test.ts` files and their helpers live in each package's `test/`, never in `src/`. */
function checkTestLayout() {
  console.log("\n> test layout (tests live in test/, never in src/)");
  const misplaced = [];
  for (const { dir } of workspacePackages()) {
    const src = join(root, dir, "src");
    if (!existsSync(src)) continue;
    for (const name of readdirSync(src, { recursive: true })) {
      if (/\.(test|spec)\.[cm]?[jt]sx?$/.test(String(name))) misplaced.push(relative(root, join(src, String(name))));
    }
  }
  if (misplaced.length > 0) {
    console.error(`test files under src/ (move them to the package's test/ folder; vitest runs only test/):\n  ${misplaced.join("\n  ")}`);
    process.exit(1);
  }
  console.log("ok");
}

/**
 * A package whose `typecheck` runs tsconfig.test.json alone (not tsconfig.json first) relies on it
 * checking its sources with the same options: the test config must include every folder the
 * source config does and have the same compilerOptions. One tsc run then covers both (a second
 * run of the sources alone repeated ~40% of the typecheck's work for nothing).
 */
function checkTypecheckConfigs() {
  console.log("\n> typecheck configs (one tsc run covers src and test)");
  const wrong = [];
  for (const { dir, manifest } of workspacePackages()) {
    const script = manifest.scripts?.typecheck ?? "";
    const [main, test] = ["tsconfig.json", "tsconfig.test.json"].map((name) => join(root, dir, name));
    if (/\btsconfig\.json\b/.test(script) || !existsSync(main) || !existsSync(test)) continue;
    const [source, tests] = [main, test].map((file) => JSON.parse(readFileSync(file, "utf8")));
    const missing = (source.include ?? []).filter((folder) => !(tests.include ?? []).includes(folder));
    if (missing.length > 0) wrong.push(`${dir}/tsconfig.test.json does not include ${missing.join(", ")}`);
    if (JSON.stringify(source.compilerOptions ?? {}) !== JSON.stringify(tests.compilerOptions ?? {}) || source.extends !== tests.extends) {
      wrong.push(`${dir}: tsconfig.test.json's options differ from tsconfig.json's, so typecheck must run both`);
    }
  }
  if (wrong.length > 0) {
    console.error(`typecheck configs:\n  ${wrong.join("\n  ")}`);
    process.exit(1);
  }
  console.log("ok");
}

/**
 * Packs every publishable package the way `pnpm publish` would (workspace: ranges rewritten) and
 * checks the tarball: publint (package.json against the files), attw (the types each resolution
 * mode sees: node10, node16 from CJS and from ESM, bundler), and the metadata this repo promises
 * (LICENSE packed, repository/homepage/bugs, engines.node equal to the root's).
 */
async function checkPackages() {
  console.log("\n> package checks (pnpm pack, publint, attw)");
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const workspace = workspacePackages();
  const failures = [];
  for (const { dir, manifest } of workspace) {
    if (manifest.engines?.node !== rootManifest.engines.node) {
      failures.push(
        `${dir}: engines.node is ${JSON.stringify(manifest.engines?.node)}, the root says ${JSON.stringify(rootManifest.engines.node)}`,
      );
    }
  }
  const work = mkdtempSync(join(tmpdir(), "retry-reflect-pack-"));
  /** The packed tarballs whose types attw checks once every package is packed. */
  const typeChecks = [];
  try {
    for (const { dir, manifest } of workspace.filter(({ manifest }) => !manifest.private)) {
      const name = manifest.name;
      const fail = (message) => {
        console.error(`${name}: ${message}`);
        failures.push(`${name}: ${message}`);
      };
      const repository = manifest.repository ?? {};
      if (!repository.url || repository.directory !== dir) fail(`repository must have a url and "directory": "${dir}"`);
      if (!manifest.homepage) fail("homepage is missing");
      if (!manifest.bugs?.url) fail("bugs.url is missing");

      const destination = join(work, name.replace("/", "__"));
      mkdirSync(destination);
      const pack = spawnSync(PNPM[0], [...PNPM.slice(1), "pack", "--pack-destination", destination], {
        cwd: join(root, dir),
        env: childEnv,
        encoding: "utf8",
      });
      const tarball = readdirSync(destination).find((file) => file.endsWith(".tgz"));
      if (pack.status !== 0 || !tarball) {
        process.stderr.write(`${pack.stdout ?? ""}${pack.stderr ?? ""}`);
        fail(`pnpm pack failed (exit ${pack.status})`);
        continue;
      }
      const path = join(destination, tarball);
      const files = spawnSync("tar", ["-tzf", path], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
      console.log(`\n${name}: packed ${tarball} (${files.length} files)`);
      for (const required of ["package/package.json", "package/LICENSE", "package/README.md"]) {
        if (!files.includes(required)) fail(`the tarball has no ${required.slice("package/".length)}`);
      }
      // --strict: publint's warnings fail the run too (its suggestions are printed only).
      if (run([...PNPM, "exec", "publint", "run", "--strict", path]) !== 0) fail("publint found problems (above)");
      typeChecks.push({ name, path });
    }
    // attw loads TypeScript and resolves every entry four ways (~2-3 s of CPU a package): one per
    // core at a time, each one's output printed whole when it ends. --no-definitely-typed: the
    // packages ship their own types; nothing is looked up on the registry.
    const attw = ({ path }) => [...PNPM, "exec", "attw", "--no-definitely-typed", "--format", "table-flipped", "--no-emoji", path];
    const results = await runConcurrently(typeChecks.map(attw));
    typeChecks.forEach(({ name }, index) => {
      const { status, output } = results[index];
      console.log(`\n${name}: attw`);
      process.stdout.write(output);
      if (status !== 0) {
        console.error(`${name}: attw found problems (above)`);
        failures.push(`${name}: attw found problems (above)`);
      }
    });
    // What `pnpm publish` itself checks before it uploads (--no-git-checks: a CI checkout may be detached).
    console.log("\npnpm publish --dry-run (every public package)");
    if (run([...PNPM, "-r", "publish", "--dry-run", "--no-git-checks"]) !== 0) failures.push("pnpm publish --dry-run failed (above)");
    changelogs(workspace, work, failures);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    console.error(`\npackage checks failed:\n  ${failures.join("\n  ")}`);
    process.exit(1);
  }
  console.log("\npackage checks: all packages ok");
}

/**
 * The release path: `changeset version` in a scratch copy of the manifests and changesets must give
 * every public package a CHANGELOG.md and a new version (the repository itself is not touched).
 */
function changelogs(workspace, work, failures) {
  console.log("\nchangeset version (in a scratch copy)");
  const scratch = join(work, "changesets");
  const copy = (path) => cpSync(join(root, path), join(scratch, path), { recursive: true });
  for (const path of ["package.json", "pnpm-workspace.yaml", ".changeset"]) copy(path);
  for (const { dir } of workspace) copy(join(dir, "package.json"));
  const cli = join(root, "node_modules", "@changesets", "cli", "bin.js");
  const status = run(["node", cli, "version"], { cwd: scratch, stdio: ["ignore", "ignore", "inherit"] });
  if (status !== 0) failures.push(`changeset version failed (exit ${status})`);
  for (const { dir, manifest } of workspace.filter(({ manifest }) => !manifest.private)) {
    const after = JSON.parse(readFileSync(join(scratch, dir, "package.json"), "utf8"));
    if (!existsSync(join(scratch, dir, "CHANGELOG.md"))) failures.push(`${manifest.name}: changeset version wrote no CHANGELOG.md`);
    else if (after.version === manifest.version) failures.push(`${manifest.name}: changeset version left the version at ${after.version}`);
    else console.log(`${manifest.name}: ${manifest.version} -> ${after.version}, CHANGELOG.md written`);
  }
}

switch (command) {
  case "test": {
    nodeVersions();
    await install();
    // Lint and format first: `npm run format` fixes what it reports.
    await step("lint and format (biome ci)", [...PNPM, "exec", "biome", "ci", "--colors=off", "."]);
    checkTestLayout();
    checkTypecheckConfigs();
    // One turbo run for both tasks. `typecheck` depends on `^build`, so a `turbo run typecheck` of its
    // own ran the builds a second time: replayed from turbo's cache in a fresh clone, built again for
    // real under TURBO_FORCE=true (which .ci/run sets). Together, each task runs once, and a package's
    // typecheck starts as soon as what it depends on is built. At most one task per core: turbo's
    // default of 10 ran up to 8 tsc/tsup processes at once on 2 cores, slower than 2 at a time.
    await step("build and typecheck (turbo)", [
      ...PNPM,
      "exec",
      "turbo",
      "run",
      "build",
      "typecheck",
      "--concurrency=100%",
      // A few lines per task as it runs (tsup runs with --silent, tsc prints only errors): progress.
      "--output-logs=new-only",
    ]);
    await timed("package checks", checkPackages);
    const report = join(root, ".vitest-report.json");
    rmSync(report, { force: true });
    console.log("\n> vitest");
    const status = await timed("vitest", () =>
      run([...PNPM, "exec", "vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...rest]),
    );
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
    printTimes();
    // The plain closing line CI reads.
    console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
    process.exit(status !== 0 ? status : failed > 0 ? 1 : 0);
    break;
  }
  case "package-checks": {
    // What `npm test` checks of the packages (pack, publint, attw, publish --dry-run, changelogs), on the current build.
    await checkPackages();
    break;
  }
  case "demo": {
    await install();
    await build();
    process.exit(run(["node", "apps/demo/dist/main.js", ...rest]));
    break;
  }
  case "bench": {
    await install();
    await build();
    process.exit(run([...PNPM, "--filter", "@retry-reflect/bench", "run", "bench", ...rest]));
    break;
  }
  case "bench-node24": {
    await install();
    await build();
    process.exit(run([...PNPM, "--filter", "@retry-reflect/bench", "run", "bench:node24", ...rest]));
    break;
  }
  case "bench-agents": {
    await install();
    await build();
    process.exit(run([...PNPM, "--filter", "@retry-reflect/bench", "run", "bench:agents", ...rest]));
    break;
  }
  case "bench-agents-sweep": {
    await install();
    await build();
    process.exit(run([...PNPM, "--filter", "@retry-reflect/bench", "run", "bench:agents", "--sweep", ...rest]));
    break;
  }
  default:
    console.error("usage: node scripts/run.mjs test|demo|package-checks|bench|bench-node24|bench-agents|bench-agents-sweep [args...]");
    process.exit(2);
}
