/**
 * @module What the built-in providers charge, as data: the list prices, context windows and
 * long-context bands of their main models (read into a table by usage/prices.ts, with PRICES over
 * it), and what each API family bills apart from tokens (the flavour rows' `pricing` column,
 * read by budget/priceable.ts). Sources beside each.
 */
import type { PricingRules } from "./flavour";

/** When the built-in figures were last compared with the providers' public price pages. */
export const PRICES_CHECKED = "2025-10-31";

/**
 * The built-in models, by provider: `provider:` then its models, `,` between them, `;` between
 * providers. Each is `model context maxOutput input output cached? cacheWrite?`.
 *
 * `context` and `maxOutput`: what the model reads at most (prompt and answer) and the most one
 * answer may generate, from each provider's model pages (platform.openai.com/docs/models,
 * docs.claude.com "Models overview" with the 1M-token context beta and Claude 3.7's 128K-output
 * beta, ai.google.dev/gemini-api/docs/models, console.groq.com/docs/models, docs.mistral.ai
 * "Models", api-docs.deepseek.com "Models & Pricing", docs.x.ai "Models"), read with PRICES_CHECKED.
 * Where a page gives no output limit of its own, the context is the bound.
 *
 * The rates: USD per million tokens (list prices, standard tier, the lowest context band); a
 * missing cached or cache-write rate is the input rate. A dated or `-latest` name falls back to
 * its base (`gpt-4o-2024-08-06` is priced as `gpt-4o`). Kept as one string: the bundle has a size budget.
 */
export const MODELS =
  "openai:gpt-5 400000 128000 1.25 10 .125,gpt-5-mini 400000 128000 .25 2 .025," +
  "gpt-5-nano 400000 128000 .05 .4 .005,gpt-4.1 1047576 32768 2 8 .5," +
  "gpt-4.1-mini 1047576 32768 .4 1.6 .1,gpt-4.1-nano 1047576 32768 .1 .4 .025," +
  "gpt-4o 128000 16384 2.5 10 1.25,gpt-4o-mini 128000 16384 .15 .6 .075,o3 200000 100000 2 8 .5," +
  "o4-mini 200000 100000 1.1 4.4 .275,o3-mini 200000 100000 1.1 4.4 .55,o1 200000 100000 15 60 7.5," +
  "text-embedding-3-small 8191 0 .02 0,text-embedding-3-large 8191 0 .13 0;" +
  "anthropic:claude-sonnet-4-5 1000000 64000 3 15 .3 3.75," +
  "claude-haiku-4-5 200000 64000 1 5 .1 1.25,claude-opus-4-1 200000 32000 15 75 1.5 18.75," +
  "claude-opus-4 200000 32000 15 75 1.5 18.75,claude-opus-4-0 200000 32000 15 75 1.5 18.75," +
  "claude-sonnet-4 1000000 64000 3 15 .3 3.75,claude-sonnet-4-0 1000000 64000 3 15 .3 3.75," +
  "claude-3-7-sonnet 200000 128000 3 15 .3 3.75,claude-3-5-sonnet 200000 8192 3 15 .3 3.75," +
  "claude-3-5-haiku 200000 8192 .8 4 .08 1,claude-3-haiku 200000 4096 .25 1.25 .03 .3;" +
  "gemini:gemini-2.5-pro 1048576 65536 1.25 10 .31,gemini-2.5-flash 1048576 65536 .3 2.5 .075," +
  "gemini-2.5-flash-lite 1048576 65536 .1 .4 .025,gemini-2.0-flash 1048576 8192 .1 .4 .025," +
  "gemini-2.0-flash-lite 1048576 8192 .075 .3;" +
  "groq:llama-3.3-70b-versatile 131072 32768 .59 .79,llama-3.1-8b-instant 131072 131072 .05 .08;" +
  "mistral:mistral-large 131072 131072 2 6,mistral-medium 131072 131072 .4 2," +
  "mistral-small 131072 131072 .1 .3;" +
  "deepseek:deepseek-chat 128000 8192 .27 1.1 .07,deepseek-reasoner 128000 65536 .55 2.19 .14;" +
  "xai:grok-4 256000 256000 3 15 .75,grok-3 131072 131072 3 15 .75," +
  "grok-3-mini 131072 131072 .3 .5 .075;" +
  // Bedrock (aws.amazon.com/bedrock/pricing, read 2026-11-28 as third parties quote its tables;
  // Claude's match Anthropic's list prices; windows from each model card, userguide/model-card-*):
  // on-demand; a cross-region profile's id is priced as its base model (NAME_PARTS). Claude 4.5
  // costs 10% more in-region or through a geographic profile (`us.`, `eu.`, ...) than through
  // `global.` (userguide/global-cross-region-inference.html: "approximately 10% savings" for
  // global; platform.claude.com "Claude on Amazon Bedrock", global vs regional endpoints: "a 10%
  // pricing premium"): the base id at the regional price, the global profile at the list price.
  "bedrock:anthropic.claude-opus-4-5-20251101-v1:0 200000 64000 5.5 27.5 .55 6.875," +
  "anthropic.claude-sonnet-4-5-20250929-v1:0 200000 64000 3.3 16.5 .33 4.125," +
  "anthropic.claude-haiku-4-5-20251001-v1:0 200000 64000 1.1 5.5 .11 1.375," +
  "global.anthropic.claude-opus-4-5-20251101-v1:0 200000 64000 5 25 .5 6.25," +
  "global.anthropic.claude-sonnet-4-5-20250929-v1:0 200000 64000 3 15 .3 3.75," +
  "global.anthropic.claude-haiku-4-5-20251001-v1:0 200000 64000 1 5 .1 1.25," +
  "anthropic.claude-opus-4-1-20250805-v1:0 200000 32000 15 75 1.5 18.75," +
  "anthropic.claude-opus-4-20250514-v1:0 200000 32000 15 75 1.5 18.75," +
  "anthropic.claude-sonnet-4-20250514-v1:0 200000 64000 3 15 .3 3.75," +
  "anthropic.claude-3-7-sonnet-20250219-v1:0 200000 64000 3 15 .3 3.75," +
  "anthropic.claude-3-5-haiku-20241022-v1:0 200000 8192 .8 4 .08 1," +
  "meta.llama4-maverick-17b-instruct-v1:0 1000000 8192 .24 .97,meta.llama4-scout-17b-instruct-v1:0 3500000 8192 .17 .66," +
  "meta.llama3-3-70b-instruct-v1:0 128000 8192 .72 .72,meta.llama3-1-405b-instruct-v1:0 128000 4096 2.4 2.4," +
  "meta.llama3-1-70b-instruct-v1:0 128000 2048 .72 .72,meta.llama3-1-8b-instruct-v1:0 128000 2048 .22 .22," +
  "amazon.nova-pro-v1:0 300000 5000 .8 3.2 .2,amazon.nova-lite-v1:0 300000 5000 .06 .24 .015," +
  "amazon.nova-micro-v1:0 128000 5000 .035 .14 .00875;" +
  // Vertex AI: Claude at Anthropic's list prices (platform.claude.com "Claude on Vertex AI", read
  // 2026-11-23 and 2026-11-28): from Sonnet 4.5 on, "regional endpoints include a 10% pricing
  // premium over global endpoints", older models one price everywhere. Answers are priced as
  // `<location>/<model>` (the dialect's `pricedByResource`): `global/` rows at the list price, the
  // model's own row (every regional and multi-region location) at 1.1x. Gemini at Vertex's list
  // prices as third parties quote them (cloud.google.com/vertex-ai/generative-ai/pricing was not
  // read: to check). A version (`@20250929`, `-001`) is priced as its model (NAME_PARTS).
  "vertex:global/claude-opus-4-5 200000 64000 5 25 .5 6.25,global/claude-sonnet-4-5 200000 64000 3 15 .3 3.75," +
  "global/claude-haiku-4-5 200000 64000 1 5 .1 1.25," +
  "claude-opus-4-5 200000 64000 5.5 27.5 .55 6.875,claude-sonnet-4-5 200000 64000 3.3 16.5 .33 4.125," +
  "claude-haiku-4-5 200000 64000 1.1 5.5 .11 1.375,claude-opus-4-1 200000 32000 15 75 1.5 18.75," +
  "claude-sonnet-4 200000 64000 3 15 .3 3.75,claude-3-5-haiku 200000 8192 .8 4 .08 1," +
  "gemini-2.5-pro 1048576 65535 1.25 10 .125,gemini-2.5-flash 1048576 65535 .3 2.5 .03," +
  "gemini-2.5-flash-lite 1048576 65535 .1 .4 .01,gemini-2.0-flash 1048576 8192 .15 .6 .0375," +
  "gemini-2.0-flash-lite 1048576 8192 .075 .3";

/**
 * The parts of a model's name a provider's price does not depend on, by provider, each taken off
 * in turn: Bedrock's ARN, then its cross-region inference profile prefix (`us.`, `eu.`, `global.`
 * ...: userguide/cross-region-inference; a `global.` id the table names is found before it goes),
 * Vertex's `@version` and Gemini's `-00N` version, then its location (`us-east5/`: a `global/` row
 * the table names is found before it goes). A name is looked up as it is, then without each.
 */
export const NAME_PARTS: Readonly<Record<string, readonly RegExp[]>> = {
  bedrock: [/^arn:aws[a-z-]*:bedrock:[^:]*:[^:]*:(?:foundation-model|inference-profile)\//, /^(?:global|us|us-gov|eu|apac|jp|au|ca)\./],
  vertex: [/@\d{8}$|-\d{3}$/, /^[a-z0-9-]+\//],
};

/**
 * Long-context bands, grouped as MODELS is, each `model above input output cached? cacheWrite?`:
 * every token of a request whose prompt passes `above` is billed at these (ai.google.dev/gemini-api/docs/pricing:
 * Gemini 2.5 Pro over 200K; docs.claude.com "Pricing", long context: Sonnet 4 and 4.5 over 200K
 * input tokens with the 1M-token context beta).
 */
export const LONG_BANDS =
  "gemini:gemini-2.5-pro 200000 2.5 15 .625;vertex:gemini-2.5-pro 200000 2.5 15 .25;" +
  "anthropic:claude-sonnet-4-5 200000 6 22.5 .6 7.5,claude-sonnet-4 200000 6 22.5 .6 7.5," +
  "claude-sonnet-4-0 200000 6 22.5 .6 7.5";

/**
 * OpenAI's (and Azure OpenAI's, the same API): web search, file search, code interpreter containers
 * and image generation bill per call or per image (openai.com/api/pricing); `web_search_options`
 * is chat completions' web search, per call; `background`: the answer comes later, without usage.
 */
export const OPENAI_PRICING: PricingRules = {
  counts: /\/responses\/input_tokens$/,
  toolFees: /^(?:web_search|file_search|code_interpreter|image_generation)/,
  perUse: ["web_search_options", "background"],
};

/** Anthropic's: web search ($10 per 1,000 searches) and code execution (container hours) bill apart from tokens (docs.claude.com, pricing). */
export const ANTHROPIC_PRICING: PricingRules = {
  counts: /\/messages\/count_tokens$/,
  toolFees: /^(?:web_search_|code_execution_)/,
  perUse: [],
};

/**
 * Vertex's: Gemini's grounding and Claude's server tools bill apart from tokens, as on their own APIs.
 * Counts: Gemini's `:countTokens`, Claude's `count-tokens:rawPredict` ("There is no cost for using the
 * count-tokens endpoint": cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/count-tokens).
 */
export const VERTEX_PRICING: PricingRules = {
  counts: /(?::countTokens|\/count-tokens:rawPredict)$/,
  toolFees: /^(?:google(?:Search(?:Retrieval)?|_search(?:_retrieval)?|Maps|_maps)|enterprise(?:WebSearch|_web_search)|web_search_|code_execution_)/,
  perUse: [],
};

/** Gemini's: grounding with Google Search or Maps bills per grounded request (ai.google.dev/gemini-api/docs/pricing); code execution is tokens. */
export const GEMINI_PRICING: PricingRules = {
  counts: /:countTokens$/,
  // googleSearch, googleSearchRetrieval, googleMaps, enterpriseWebSearch, in camelCase or snake_case.
  toolFees: /^(?:google(?:Search(?:Retrieval)?|_search(?:_retrieval)?|Maps|_maps)|enterprise(?:WebSearch|_web_search))$/,
  perUse: [],
};
