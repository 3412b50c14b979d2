// The notes a host adds to the model's request for the tools it leaves out while their circuit is
// open or isolated (LangChain's `hideOpenCircuitTools`): model-visible sentences, like every text here.

/** "about 42 s" / "about 3 min": the remaining open time, rounded up, as the core's stop message says it. */
export function aboutDuration(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  return seconds < 120 ? `about ${seconds} s` : `about ${Math.ceil(seconds / 60)} min`;
}

/** The system note for a tool left out because its circuit is open (`remainingMs` unknown: `later`). */
export function openCircuitNote(toolName: string, remainingMs: number | undefined): string {
  const back = remainingMs === undefined ? "later" : `in ${aboutDuration(remainingMs)}`;
  return `The tool '${toolName}' is temporarily unavailable (its circuit breaker opened after repeated failures), so it is not in your tools for now; it may be available again ${back}. Continue without it or tell the user.`;
}

/** The system note for a tool left out because an operator isolated its circuit. */
export function isolatedCircuitNote(toolName: string): string {
  return `The tool '${toolName}' has been disabled by an operator, so it is not in your tools until it is re-enabled. Continue without it or tell the user it is unavailable.`;
}
