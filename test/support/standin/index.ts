// The stand-in LLM provider for end-to-end tests and benchmarks. See README.md beside this file.
export { startStandin } from "./server.ts";
export type { Standin } from "./server.ts";
export { DEFAULT_OPTIONS } from "./options.ts";
export type { FaultStatus, RetryAfterMode, StandinOptions } from "./options.ts";
export type { Attempt, Outcome, Stats } from "./stats.ts";
