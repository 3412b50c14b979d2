import type { ToolEffect } from "../outcome.js";
import type { RetryReflectPlugin } from "../plugin.js";
import { isRecord } from "./host-options.js";

/** MCP tool annotations (all hints, per the MCP spec); adapters read the three effect hints. */
export interface EffectHints {
  readonly title?: string;
  readonly openWorldHint?: boolean;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
}

/**
 * The effect MCP tool annotations suggest, or undefined when they say nothing:
 * `readOnlyHint: true` → `"read"`; else `idempotentHint: true` → `"idempotent"` (repeating it
 * changes nothing more, even when destructive); else `destructiveHint: true` or `readOnlyHint: false`
 * → `"write"` (the spec's defaults for a tool that is not read-only: destructive, not idempotent).
 * Anything that is not an object of hints says nothing.
 */
export function effectOfAnnotations(annotations: EffectHints | undefined): ToolEffect | undefined {
  if (typeof annotations !== "object" || annotations === null) return undefined;
  if (annotations.readOnlyHint === true) return "read";
  if (annotations.idempotentHint === true) return "idempotent";
  if (annotations.destructiveHint === true || annotations.readOnlyHint === false) return "write";
  return undefined;
}

/**
 * Whether a host tool's schema (zod 3 and 4, classic and mini; JSON Schema, also inside the AI SDK's
 * `jsonSchema()` and MCP's `inputSchema`) is an object schema whose properties hold `field`;
 * undefined when it cannot be told (no schema, another shape, a schema that throws when read, one
 * given as a promise): the plugin's own rule then applies.
 */
export function declaresField(schema: unknown, field: string): boolean | undefined {
  try {
    return declares(schema, field, 0);
  } catch {
    return undefined; // a getter or a proxy trap that throws: not a schema to read
  }
}

function declares(schema: unknown, field: string, depth: number): boolean | undefined {
  if (!isRecord(schema) || depth > 4) return undefined;
  // zod 4 (classic and mini): `_zod.def`, an object's `shape` a record of its fields.
  const zod4 = isRecord(schema._zod) ? schema._zod.def : undefined;
  if (isRecord(zod4)) return zod4.type === "object" && isRecord(zod4.shape) ? Object.hasOwn(zod4.shape, field) : undefined;
  // zod 3: `_def.typeName`, an object's shape a function (or a record).
  const zod3 = schema._def;
  if (isRecord(zod3) && typeof zod3.typeName === "string") {
    if (zod3.typeName !== "ZodObject") return undefined;
    const shape = typeof zod3.shape === "function" ? (zod3.shape as () => unknown)() : zod3.shape;
    return isRecord(shape) ? Object.hasOwn(shape, field) : undefined;
  }
  // The AI SDK's `jsonSchema(schema)`: the JSON Schema is its `jsonSchema` member (not a promise of one).
  if ("jsonSchema" in schema && !("properties" in schema)) {
    const inner = schema.jsonSchema;
    return isRecord(inner) && typeof inner.then !== "function" ? declares(inner, field, depth + 1) : undefined;
  }
  // JSON Schema of an object (MCP's `inputSchema`).
  const { properties } = schema;
  if (isRecord(properties)) return Object.hasOwn(properties, field);
  return schema.type === "object" ? false : undefined;
}

/** The idempotency key argument of a tool: its policy's `idempotency.keyField`, else the plugin's. */
export function keyFieldOf(plugin: RetryReflectPlugin, toolName: string): string {
  return (plugin.options.tools.get(toolName) ?? plugin.options).idempotency.keyField;
}

/** `ToolCall.declaresKey` of a host tool: only for a `write` (the only effect that reads it). */
export function declaresKey(
  plugin: RetryReflectPlugin,
  toolName: string,
  effect: string | undefined,
  schema: unknown,
): boolean | undefined {
  return effect === "write" ? declaresField(schema, keyFieldOf(plugin, toolName)) : undefined;
}
