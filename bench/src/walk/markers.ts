// The walk's window: the driver (driver.ts) starts stepping at `walkStart`'s pause and stops at
// `walkEnd`'s. Nothing else: a file of its own, so that its steps are easy to tell apart.

/** Opens the window: the driver pauses here and steps into what follows. */
export function walkStart(): void {
  // biome-ignore lint/suspicious/noDebugger: the driver's first pause.
  debugger;
}

/** Closes the window; also stops the walk when stepping lost track of the call. */
export function walkEnd(): void {
  // biome-ignore lint/suspicious/noDebugger: the driver's last pause.
  debugger;
}
