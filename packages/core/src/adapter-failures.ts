// `@retry-reflect/core/adapter/failures`: for adapters, telling a returned failure from a result,
// reading the structured error out of a result's text, and rendering schema failures (zod issues,
// JSON Schema errors) for the model.

export { describeProblem, invalidArgumentsError, problemsFromIssues, problemsFromJsonSchemaErrors } from "./adapter/schema-issues.js";
export {
  errorJsonOfText,
  isZodError,
  ReturnedFailureError,
  structuredErrorOf,
  textOfContent,
  zodArgumentsError,
} from "./adapter/tool-failures.js";
export { isReturnedFailure } from "./classify/classify-error.js";
export { createToolError } from "./errors/tool-error.js";
