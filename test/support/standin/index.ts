// The stand-in LLM provider for end-to-end tests and benchmarks. See README.md beside this file.
export { startStandin } from "./server.ts";
export type { Standin } from "./server.ts";
export { DEFAULT_OPTIONS } from "./options.ts";
export type { FaultStatus, KeyLimits, RetryAfterMode, StandinOptions } from "./options.ts";
export { byCredentialIn } from "./stats.ts";
export type { Attempt, CredentialStats, Outcome, Stats } from "./stats.ts";
export { directBase, gatewayProviders, OPENAI_SDK_PATHS, PROVIDER_PATHS } from "./bases.ts";
export type { BuiltIn, OpenAiStyle } from "./bases.ts";
export type { DialectName } from "./dialect.ts";
export type { ServiceAccountFile, ServiceAccountSpec } from "./google-oauth.ts";
export { baseModel, VERTEX_ANTHROPIC_VERSION } from "./vertex.ts";
export { DSQ_MESSAGE } from "./vertex-errors.ts";
