/** Thrown by `build()` / `create()` for an invalid option; names the option and the value. */
export class InvalidOptionError extends TypeError {
  readonly option: string;
  readonly value: unknown;

  constructor(option: string, value: unknown, expected: string) {
    super(`Invalid option \`${option}\`: expected ${expected}, received ${describe(value)}`);
    this.name = "InvalidOptionError";
    this.option = option;
    this.value = value;
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === undefined || value === null) return String(value);
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}
