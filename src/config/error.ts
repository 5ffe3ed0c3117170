/** A var the operator set to something unusable: the gateway says which, rather than guessing. */
export class ConfigError extends Error {}
