import type { ToolEffect } from "@retry-reflect/core";
import { type EffectHints, effectOfAnnotations } from "@retry-reflect/core/adapter/options";
import { abortable } from "./abort.js";
import type { McpClientLike } from "./mcp-types.js";

/** Pages of `tools/list` read at most, in case a server hands out cursors forever. */
const MAX_PAGES = 100;

type ListedTool = { readonly name: string; readonly annotations?: EffectHints | undefined; readonly inputSchema?: unknown };

/**
 * The effects a server's tool annotations suggest, fetched with `listTools` on first need and
 * cached per wrapped client. Concurrent first calls share one fetch. A fetch that fails gives no
 * hints (the call falls back to `defaultEffect`) and is tried again on the next call that needs one.
 * A `listTools` made through the wrapper refreshes the cache with what it returns.
 */
/** What a listing says of one tool: the effect its annotations suggest, and its input schema (does it take an idempotency key?). */
interface ListedHints {
  readonly effect: ToolEffect | undefined;
  readonly inputSchema: unknown;
}

function addListed(hints: Map<string, ListedHints>, tools: readonly ListedTool[]): void {
  for (const tool of tools) hints.set(tool.name, { effect: effectOfAnnotations(tool.annotations), inputSchema: tool.inputSchema });
}

export class ToolHints {
  private hints: Map<string, ListedHints> | undefined;
  private loading: Promise<void> | undefined;

  constructor(private readonly client: McpClientLike) {}

  /** The listed `inputSchema` of `toolName`, if the listing is loaded and has the tool. */
  schemaOf(toolName: string): unknown {
    return this.hints?.get(toolName)?.inputSchema;
  }

  /** The hinted effect of `toolName`, fetching the listing first if needed; the caller's abort cuts the wait short. */
  async effectOf(toolName: string, signal: AbortSignal | undefined): Promise<ToolEffect | undefined> {
    if (this.hints === undefined) {
      this.loading ??= this.load().finally(() => {
        this.loading = undefined;
      });
      await abortable(this.loading, signal);
    }
    return this.hints?.get(toolName)?.effect;
  }

  /**
   * Records a `tools/list` page the user asked for through the wrapper: a complete listing (one
   * page, no cursor) replaces the cache; a page of a longer one adds to a cache already loaded (a
   * partial listing never stands for the whole: the lazy fetch reads every page).
   */
  remember(listed: { readonly tools: readonly ListedTool[]; readonly nextCursor?: string | undefined }, firstPage: boolean): void {
    if (firstPage && listed.nextCursor === undefined) this.hints = new Map();
    else if (this.hints === undefined) return;
    addListed(this.hints, listed.tools);
  }

  private async load(): Promise<void> {
    try {
      const hints = new Map<string, ListedHints>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const listed = await this.client.listTools(cursor === undefined ? undefined : { cursor });
        addListed(hints, listed.tools);
        cursor = listed.nextCursor;
        if (cursor === undefined) break;
      }
      this.hints = hints;
    } catch {
      // No hints this time: the call uses `defaultEffect`; the next call that needs a hint asks again.
    }
  }
}
