// Module hooks (registered with `module.register` by `main.ts`): the workspace packages resolve to
// their TypeScript sources (`packages/*/src`), as vitest's aliases make them, instead of `dist`, so
// that the walk's script URLs are the source files. tsx (loaded first) compiles them. The sources
// are the repository's, or a snapshot's (`--at=<rev>`): `initialize` gets the root to use.

let aliases: Readonly<Record<string, string>> = {};

export function initialize(data: { readonly root: string }): void {
  const source = (path: string) => new URL(path, data.root).href;
  aliases = {
    "@retry-reflect/core/testing": source("packages/core/src/testing.ts"),
    "@retry-reflect/core/primitives": source("packages/core/src/primitives.ts"),
    "@retry-reflect/core/events": source("packages/core/src/events.ts"),
    "@retry-reflect/core/stores": source("packages/core/src/stores.ts"),
    "@retry-reflect/core/adapter/options": source("packages/core/src/adapter-options.ts"),
    "@retry-reflect/core/adapter/failures": source("packages/core/src/adapter-failures.ts"),
    "@retry-reflect/core/adapter": source("packages/core/src/adapter.ts"),
    "@retry-reflect/core": source("packages/core/src/index.ts"),
    "@retry-reflect/langchain": source("packages/langchain-adapter/src/index.ts"),
  };
}

type NextResolve = (specifier: string, context: unknown) => Promise<{ url: string }>;

export async function resolve(specifier: string, context: unknown, nextResolve: NextResolve): Promise<{ url: string }> {
  return nextResolve(aliases[specifier] ?? specifier, context);
}
