// Shared limit: K processes share one key's requests-per-minute limit.
import { paced } from "../paced.ts";

const MAX_TOKENS = 16;

export const shared = paced({
  name: "shared",
  label: (rpm) => `shared limit (${rpm} RPM)`,
  maxTokens: MAX_TOKENS,
  cost: 1,
  limit: (rpm) => ({ rpm }),
  drain: [MAX_TOKENS],
});
