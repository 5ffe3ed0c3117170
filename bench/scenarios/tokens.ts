// Token limit: a large max_tokens makes TPM bind long before RPM (which is left unlimited).
import { requestTokens } from "../context.ts";
import { paced } from "../paced.ts";

const MAX_TOKENS = 4_000;

export const tokens = paced({
  name: "tokens",
  label: (tpm) => `token limit (${tpm.toLocaleString("en-US")} TPM, max_tokens ${MAX_TOKENS})`,
  maxTokens: MAX_TOKENS,
  cost: requestTokens(MAX_TOKENS),
  limit: (tpm) => ({ tpm }),
  drain: [25 * MAX_TOKENS, MAX_TOKENS],
});
