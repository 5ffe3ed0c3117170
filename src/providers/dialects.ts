/**
 * @module The dialect rows: one per built-in provider, and `generic` for a custom provider that
 * names none (it reads every family, as the gateway did before dialects). Sources beside each
 * row; where only a third party says so, the comment says that too.
 */
import { DAY_MS, type Dialect, MINUTE_MS, MONTH_MS, SECOND_MS, USAGE_AT } from "./dialect";
import { openaiFamily, anthropicWindow, genericFamily, HINTS, SPENT_CODES, KEY_CODES, ANTHROPIC_NO_CREDIT, GOOGLE, PAYMENT_REQUIRED, OPENAI_TOO_LARGE, TOO_LARGE_413, ASKS, READS, none } from "./dialect-parts";
import { ANTHROPIC_TIERS, GEMINI_TIERS, GROQ_TIERS, OPENAI_TIERS } from "./tiers";

const ROWS = {
  /** Every family, as before dialects: for a custom provider that names none. */
  generic: {
    limits: {
      requests: [openaiFamily("requests"), [anthropicWindow("requests")], genericFamily("x-ratelimit-"), genericFamily("ratelimit-"), "ietf"],
      tokens: [openaiFamily("tokens"), [anthropicWindow("tokens")], [anthropicWindow("input-tokens"), anthropicWindow("output-tokens")]],
      hints: HINTS, body: ["error-details"],
    },
    refusals: [OPENAI_TOO_LARGE, TOO_LARGE_413, SPENT_CODES, ANTHROPIC_NO_CREDIT, KEY_CODES, ...GOOGLE],
    usage: READS,
  },
  /**
   * platform.openai.com/docs/guides/rate-limits, /docs/guides/error-codes; `stream_options`
   * (/docs/api-reference/chat/create). A request above the tokens limit is refused outright (OPENAI_TOO_LARGE).
   * An image draws about 800 from TPM whatever its size or detail: only a third party says so, who
   * read `x-ratelimit-remaining-tokens` around images of 400 to 1,600 px (community.openai.com/t/1076053:
   * 843 for one image and 45 tokens of text, 71 for the text alone); OpenAI's page says only that
   * images count towards TPM. Usage counts them by the vision guide's formula (85 to 1,445 on gpt-4o).
   */
  openai: {
    limits: { requests: [openaiFamily("requests")], tokens: [openaiFamily("tokens", MINUTE_MS, true)], hints: HINTS, imageTokens: 800 },
    refusals: [OPENAI_TOO_LARGE, SPENT_CODES, KEY_CODES],
    usage: ASKS, tiers: OPENAI_TIERS,
  },
  /**
   * docs.anthropic.com/en/api/rate-limits (headers, RFC 3339 resets), /en/api/errors (529 overloaded:
   * transient). Input and output tokens are limited apart (ITPM, OTPM), OTPM "estimated based on
   * max_tokens at the beginning of each request" (the same page): each is a window charged its part
   * (policy/estimate.ts costFor). `tokens-*` is the two together (40,000 + 8,000 = 48,000 in the
   * header set of test/policy/headers.test.ts), which no single limit enforces: charged a whole
   * estimate it let an OTPM that binds be found by 429s. Cache-aware ITPM (the same page, and in the
   * same words Microsoft Foundry's Claude quotas page): for most models only `input_tokens` and
   * `cache_creation_input_tokens` count, not cache reads; the page marks older models whose ITPM
   * counts them too (the row takes the Claude 3 family so, the safe side).
   */
  anthropic: {
    limits: {
      requests: [[anthropicWindow("requests")]],
      tokens: [[anthropicWindow("input-tokens")]],
      output: [[anthropicWindow("output-tokens")]],
      cacheReadsFree: { except: /^claude-3/ },
      body: [],
    },
    refusals: [TOO_LARGE_413, SPENT_CODES, ANTHROPIC_NO_CREDIT, KEY_CODES],
    usage: READS, tiers: ANTHROPIC_TIERS,
  },
  /**
   * No limit headers (ai.google.dev/gemini-api/docs/rate-limits): a 429 `RESOURCE_EXHAUSTED` with
   * `RetryInfo` and `QuotaFailure` in its body (quotaValue: seen in answers, not documented).
   * The OpenAI-compatible route `/v1beta/openai/...` names the model in the body and accepts
   * `stream_options` (ai.google.dev/gemini-api/docs/openai); the native route always carries `usageMetadata`.
   */
  gemini: {
    // "Tokens per minute (input) (TPM)" (the same page): the output allowance draws from no window.
    limits: { requests: none, tokens: none, body: ["error-details"], promptOnly: true },
    refusals: GOOGLE,
    usage: ASKS, scope: { bodyRoutes: /^\/v1(?:beta|alpha)?\/openai\// }, tiers: GEMINI_TIERS,
  },
  /**
   * console.groq.com/docs/rate-limits: `x-ratelimit-*-requests` are per DAY (RPD), `-tokens` per
   * minute, resets Go durations ("2m59.56s", "7.66s"); `retry-after` on a 429. /docs/errors: 498
   * "Flex Tier Capacity Exceeded" (back off and retry). Streamed usage is in the last chunk's
   * `x_groq.usage` (/docs/api-reference), so nothing is asked. A request above the tokens limit: a 413 (TOO_LARGE_413).
   */
  groq: {
    limits: { requests: [openaiFamily("requests", DAY_MS)], tokens: [openaiFamily("tokens", MINUTE_MS, true)], body: ["try-again-in"] },
    refusals: [TOO_LARGE_413, { means: "capacity", status: [498] }, SPENT_CODES, KEY_CODES],
    usage: { at: [...USAGE_AT, ["x_groq", "usage"]], ask: { kind: "none" } },
    tiers: GROQ_TIERS,
  },
  /**
   * Mistral documents its limits only in its console (docs.mistral.ai/deployment/laplateforme/tier);
   * the headers are as third-party clients read them: `x-ratelimitbysize-{limit,remaining}-{minute,month}`
   * (tokens) and `ratelimitbysize-{limit,remaining,reset}` (the minute's, reset in seconds). The
   * month's allowance is a cap.
   */
  mistral: {
    limits: {
      requests: none,
      tokens: [
        [
          { limit: "x-ratelimitbysize-limit-minute", remaining: "x-ratelimitbysize-remaining-minute", reset: "ratelimitbysize-reset", resetFormat: "seconds", periodMs: MINUTE_MS },
          { limit: "x-ratelimitbysize-limit-month", remaining: "x-ratelimitbysize-remaining-month", periodMs: MONTH_MS, cap: true },
        ],
        [{ limit: "ratelimitbysize-limit", remaining: "ratelimitbysize-remaining", reset: "ratelimitbysize-reset", resetFormat: "seconds", periodMs: MINUTE_MS }],
      ],
      body: [],
    },
    refusals: [SPENT_CODES, KEY_CODES],
    usage: READS,
  },
  /**
   * openrouter.ai/docs/api-reference/limits and /errors: 402 for no credits; a 429's
   * `error.metadata.headers` tells `X-RateLimit-Limit/Remaining/Reset` (epoch ms), a daily cap such
   * as `free-models-per-day` among them. Usage is in the last chunk of every stream (/docs/use-cases/usage-accounting).
   */
  openrouter: {
    limits: { requests: none, tokens: none, body: ["metadata-headers"] },
    refusals: [PAYMENT_REQUIRED, SPENT_CODES, KEY_CODES],
    usage: READS,
  },
  /**
   * api-docs.deepseek.com/quick_start/rate_limit: no fixed limit; under load a plain answer is held
   * with blank lines and a stream with `: keep-alive` comments, up to 10 minutes.
   * /quick_start/error_codes: 402 Insufficient Balance, 503 Server Overloaded. `stream_options`
   * is in /api/create-chat-completion.
   */
  deepseek: {
    limits: { requests: none, tokens: none },
    refusals: [PAYMENT_REQUIRED, { means: "capacity", status: [503] }, SPENT_CODES, KEY_CODES],
    usage: ASKS,
  },
  /**
   * docs.together.ai/docs/rate-limits: dynamic limits; a 503 at or below the dynamic rate (capacity),
   * a 429 above it. The older page gives `x-ratelimit-limit`/`-remaining`/`-reset` (requests) and
   * `x-ratelimit-limit-tokens`/`-remaining-tokens` per SECOND, resets in seconds; third-party
   * clients also read `x-tokenlimit-*`.
   */
  together: {
    limits: {
      requests: [[{ limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining", reset: "x-ratelimit-reset", resetFormat: "seconds", periodMs: SECOND_MS }]],
      tokens: [
        [{ limit: "x-ratelimit-limit-tokens", remaining: "x-ratelimit-remaining-tokens", periodMs: SECOND_MS }],
        [{ limit: "x-tokenlimit-limit", remaining: "x-tokenlimit-remaining", periodMs: SECOND_MS }],
      ],
      refusalPeriodMs: SECOND_MS,
    },
    refusals: [{ means: "capacity", status: [503] }, SPENT_CODES, KEY_CODES],
    usage: READS,
  },
  /**
   * docs.fireworks.ai `serverless/rate-limits`: adaptive limits on prompt and generated tokens, "your
   * current effective rate limits (described in tokens per second) are in the response headers
   * X-Ratelimit-Limit-Tokens-Prompt and X-Ratelimit-Limit-Tokens-Generated"; the `remaining-*`
   * headers as third-party clients read them (no reset is sent). Requests: an account-wide limit
   * per minute (`guides/quotas_usage/account-quotas`).
   */
  fireworks: {
    limits: {
      requests: [[{ limit: "x-ratelimit-limit-requests", remaining: "x-ratelimit-remaining-requests", periodMs: MINUTE_MS }]],
      // Two token windows, each charged with what it counts (policy/estimate.ts costOf): the
      // prompt's with a request's prompt, the generated one with its output allowance (charged the
      // whole estimate, a window a hundredth of the prompt's size would pace a key far below it).
      tokens: [[{ limit: "x-ratelimit-limit-tokens-prompt", remaining: "x-ratelimit-remaining-tokens-prompt", periodMs: SECOND_MS }]],
      output: [[{ limit: "x-ratelimit-limit-tokens-generated", remaining: "x-ratelimit-remaining-tokens-generated", periodMs: SECOND_MS }]],
      body: [],
    },
    refusals: [SPENT_CODES, KEY_CODES],
    usage: READS,
  },
  /**
   * docs.x.ai `developers/rate-limits`: per-model limits in requests per SECOND (RPM / 60: "you
   * cannot spend a full minute's requests in a single second") and tokens per minute, no limit
   * headers: a key is paced from its refusals over a second. Spent credits or a monthly spending
   * limit come as a 429 whose `error` is a plain string, and a bad key as a 400 (both sentences as
   * xAI sends them, seen in public bug reports: github.com/continuedev/continue/issues/10373).
   * Streams carry usage only when `stream_options.include_usage` is set (third party:
   * brainlid/langchain#626, superagent-ai/grok-cli#70).
   */
  xai: {
    limits: { requests: none, tokens: none, refusalPeriodMs: SECOND_MS },
    refusals: [
      {
        means: "spent", status: [429, 403], evidence: "spending_limit",
        sentence: /^Your team [0-9a-f-]{8,64} has either used all available credits or reached its monthly spending limit\. To continue making API requests, please purchase more credits or raise your spending limit\.$/,
      },
      { means: "bad_key", status: [400, 401], evidence: "incorrect_api_key", sentence: /^Incorrect API key provided: [^\s]{0,200}\. You can obtain an API key from https:\/\/console\.x\.ai\.$/ },
      SPENT_CODES, KEY_CODES,
    ],
    usage: ASKS,
  },
  /**
   * learn.microsoft.com/azure/ai-foundry/openai/quotas-limits: limits per resource and deployment,
   * RPM enforced over 1 s or 10 s; answers carry `x-ratelimit-remaining-requests`/`-tokens` only,
   * a 429 `retry-after-ms` and `retry-after`. `stream_options` exists from api-version
   * 2024-09-01-preview (GA 2024-10-21) and on the v1 surface (/openai/reference-preview).
   */
  azure: {
    limits: { requests: [openaiFamily("requests")], tokens: [openaiFamily("tokens")], hints: HINTS },
    refusals: [SPENT_CODES, KEY_CODES],
    // The versionless v1 surface (`/openai/v1/...`, or a pool's `/v1/...`, sent at the member's version) takes it.
    usage: { at: USAGE_AT, ask: { kind: "stream_options", since: { date: "2024-09-01", param: "api-version", versionless: /^(?:\/openai)?\/v1\// } } },
    scope: { bodyRoutes: /^\/openai\/v1\//, resource: true },
  },
  /**
   * Amazon Bedrock's runtime (docs.aws.amazon.com/bedrock/latest/APIReference/, the runtime's errors;
   * userguide/quotas.html): no rate-limit headers and no retry-after, ever: requests and tokens per
   * minute per account, region and model, learned from its refusals. A refusal names its type in
   * `x-amzn-errortype` (`ThrottlingException:http://internal.amazon.com/coral/...`), its body a
   * message only. ThrottlingException (429) is the rate limit; ModelNotReadyException (also a 429,
   * which the SDKs retry) is capacity; ServiceQuotaExceededException is spent; a refused signature
   * or key is the member's: the IAM guide names SignatureDoesNotMatch (reference_sigv-troubleshooting),
   * bedrock-runtime sends InvalidSignatureException (third party: aws-beam/aws-erlang#161).
   * ServiceUnavailable (503), InternalServer (500) and ModelTimeout (408) are transient by status;
   * Validation (400) and ModelError (424) fatal. Usage: Converse's `usage`, a model's own body
   * (Claude's), else the `X-Amzn-Bedrock-*-Token-Count` headers every InvokeModel answer carries;
   * streams in event-stream frames (usage/event-frames.ts). The OpenAI-compatible route names its model
   * in the body (userguide/inference-chat-completions.html).
   */
  bedrock: {
    // An output token draws five from a tokens quota on Claude 3.7 Sonnet and the Claude 4 family
    // ("burndown rate", userguide/quotas-token-burndown.html names Opus 4 and Sonnet 4; the rest as
    // AWS's sample aws-samples/sample-quota-dashboard-for-amazon-bedrock says "Claude 3.7/4 series").
    // A request's prompt and output limit (the model's whole output when it names none) are reserved
    // when it starts, and it is settled at what it drew when it ends: its prompt less cache reads and
    // its output at that rate (that sample, and aws/agent-toolkit-for-aws quota-health.md). Charged
    // at its start the most it can draw (its output limit at the rate), never less than Bedrock
    // takes by its end; given back the rest with its answer. A refusal says which quota it hit in its
    // message ("Too many tokens" or "Too many requests, please wait before trying again.", AWS's
    // knowledge center, repost.aws/knowledge-center/bedrock-throttling-error): the window the key learns.
    limits: {
      requests: none, tokens: none, body: ["quota-words"], outputRate: { rate: 5, models: /anthropic\.claude-(?:3-7-sonnet|(?:opus|sonnet|haiku)-4)/ }, returnsUnused: true, unstatedOutput: "model",
    },
    refusals: [
      { means: "bad_key", status: [401, 403], code: ["invalidsignatureexception", "signaturedoesnotmatch", "unrecognizedclientexception", "invalidclienttokenid", "expiredtokenexception", "incompletesignature", "missingauthenticationtokenexception", "accessdeniedexception"] },
      { means: "spent", code: ["servicequotaexceededexception"] },
      { means: "capacity", status: [429], code: ["modelnotreadyexception"] },
    ],
    usage: {
      at: USAGE_AT, ask: { kind: "none" },
      headers: { input: "x-amzn-bedrock-input-token-count", output: "x-amzn-bedrock-output-token-count", cached: "x-amzn-bedrock-cache-read-input-token-count", cacheWrite: "x-amzn-bedrock-cache-write-input-token-count" },
      // The streaming routes' framing (API_runtime_InvokeModelWithResponseStream, ConverseStream):
      // InvokeModel's last chunk carries the invocation's totals under this field.
      frames: { type: "application/vnd.amazon.eventstream", metrics: "amazon-bedrock-invocationMetrics" },
    },
    scope: { resource: true, bodyRoutes: /^\/openai\// },
    errorTypeHeader: "x-amzn-errortype",
  },
  /**
   * Google Vertex AI (cloud.google.com/vertex-ai/generative-ai/docs/quotas, /dynamic-shared-quota,
   * /error-code-429): no rate-limit headers and no retry-after; quotas per project, region and base
   * model, or the dynamic shared quota: a 429 `RESOURCE_EXHAUSTED` either way (a quota by name, or
   * "Resource exhausted, please try again later."), learned from its refusals. Claude on Vertex
   * also answers Anthropic's 529 overloaded (transient by status). Usage: Claude's `usage`, Gemini's
   * `usageMetadata`.
   */
  vertex: {
    // Its tokens quotas count input alone, for both families: Gemini's
    // `generate_content_input_tokens_per_minute_per_base_model` (/docs/quotas), Claude's
    // `online_prediction_input_tokens_per_minute_per_base_model`, whose output is a quota of its own
    // (`..._output_tokens_per_minute_...`, partner-models/claude/quotas), stated as `outputTokensPerMinute`.
    // A refusal names the quota it hit in its message alone ("Quota exceeded for
    // aiplatform.googleapis.com/<metric> ..."): the window the key learns is that one.
    limits: { requests: none, tokens: none, body: ["error-details", "quota-words"], promptOnly: true },
    // A service account that may not use the project, or whose project has no billing: the member's (its ErrorInfo reason, cloud.google.com/apis/design/errors).
    refusals: [...GOOGLE, { means: "bad_key", status: [403], reason: ["IAM_PERMISSION_DENIED", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"] }, { means: "spent", status: [403], reason: ["BILLING_DISABLED"] }],
    usage: READS,
    // "The requests per minute (RPM) quota applies to a base model and all versions, identifiers,
    // and tuned versions of that model" (/docs/quotas): Claude's `@20250929`, Gemini's `-001`.
    scope: { resource: true, version: /@\d{8}$|-\d{3}$/, pricedByResource: true },
  },
} as const satisfies Record<string, Omit<Dialect, "name">>;

export type DialectName = keyof typeof ROWS;

/** The rows by name, each read as a Dialect (a column one row leaves out is absent, not an error), named by its key. */
export const DIALECTS: Readonly<Record<DialectName, Dialect>> = Object.fromEntries(
  Object.entries(ROWS as Record<string, Omit<Dialect, "name">>).map(([name, row]) => [name, { name, ...row }]),
) as Record<DialectName, Dialect>;
