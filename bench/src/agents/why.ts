// Why retry-reflect wins, ties or loses in each cell: the mechanism, in words (AGENTS.md quotes it).
export const WHY: Readonly<Record<string, string>> = {};
