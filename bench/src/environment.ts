import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, freemem, loadavg, platform, release, totalmem } from "node:os";
import { fileURLToPath } from "node:url";

export interface Environment {
  readonly date: string;
  readonly node: string;
  readonly v8: string;
  readonly os: string;
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly freeMemoryGiB: number;
  readonly command: string;
  /** 1-minute load average when the run started (the machines are shared: above the core count, other processes competed). */
  readonly loadAverageAtStart: number;
  readonly commit: string;
  readonly versions: Readonly<Record<string, string>>;
}

const benchRoot = fileURLToPath(new URL("..", import.meta.url));

function packageVersion(name: string): string {
  try {
    const json = JSON.parse(readFileSync(`${benchRoot}node_modules/${name}/package.json`, "utf8")) as { version?: string };
    return json.version ?? "?";
  } catch {
    return "?";
  }
}

function gitCommit(): string {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: benchRoot, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "../packages/core/src", "../packages/langchain-adapter/src"], {
      cwd: benchRoot,
      encoding: "utf8",
    }).trim();
    return dirty === "" ? commit : `${commit} (+ uncommitted changes in core/adapter)`;
  } catch {
    return "unknown";
  }
}

/** The command that produces this Node major's results (the bench's script for it). */
function benchCommand(): string {
  const major = process.versions.node.split(".")[0];
  if (major === "20") return "npm run bench  (= node --expose-gc --no-warnings --import tsx bench/src/main.ts)";
  if (major === "24")
    return "cd bench && npm run bench:node24  (= node ../scripts/node24.mjs -- --expose-gc --no-warnings --import tsx src/main.ts)";
  return `cd bench && node --expose-gc --no-warnings --import tsx src/main.ts  (Node ${process.versions.node})`;
}

export function environment(): Environment {
  const cpuList = cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    v8: process.versions.v8,
    os: `${platform()} ${release()}`,
    cpu: cpuList[0]?.model.trim() ?? "unknown",
    cores: cpuList.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    command: benchCommand(),
    loadAverageAtStart: Math.round(loadavg()[0]! * 100) / 100,
    commit: gitCommit(),
    versions: Object.fromEntries(
      ["@retry-reflect/core", "@retry-reflect/langchain", "cockatiel", "opossum", "p-retry", "langchain", "@langchain/core", "mitata"].map(
        (name) => [name, packageVersion(name)],
      ),
    ),
  };
}

export const BENCH_ROOT = benchRoot;
