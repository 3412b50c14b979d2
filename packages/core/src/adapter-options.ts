// `@retry-reflect/core/adapter/options`: checking the options every adapter takes (plugin or
// options, scope, effects, annotations) with the same errors, and reading what a tool declares:
// its effect from its annotations, and whether its schema has a field (an idempotency key).

export { type EffectHints, effectOfAnnotations } from "./adapter/effect-hints.js";
export {
  type AnnotatedToolOptions,
  type CheckedAnnotatedToolOptions,
  type CheckedScopedToolOptions,
  checkAnnotatedToolOptions,
  checkEffect,
  checkScopedToolOptions,
  checkScopeOption,
  isRecord,
  isToolEffect,
  pluginOf,
  randomScope,
} from "./adapter/host-options.js";
export { isPlugin } from "./adapter/is-plugin.js";
export { declaresField, declaresKey, keyFieldOf } from "./adapter/schema-fields.js";
