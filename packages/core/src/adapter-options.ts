// `@retry-reflect/core/adapter/options`: checking the options every adapter takes (plugin or
// options, scope, effects, annotations) with the same errors, and reading what a tool declares:
// its effect from its annotations, and whether its schema has a field (an idempotency key).

export {
  type AnnotatedToolOptions,
  type CheckedAnnotatedToolOptions,
  type CheckedScopedToolOptions,
  checkAnnotatedToolOptions,
  checkEffect,
  checkScopedToolOptions,
  checkScopeOption,
  declaresField,
  declaresKey,
  type EffectHints,
  effectOfAnnotations,
  isPlugin,
  isRecord,
  isToolEffect,
  keyFieldOf,
  pluginOf,
  randomScope,
} from "./adapter/host-options.js";
