// A quota the operator knows (`PROVIDERS.<name>.quota`): Bedrock's and Vertex's are in the
// account's or project's quota console, never in an answer's headers. Stated per minute, per limiter
// key (a provider's keys are per model and credential); a model's own entry over the provider's.
// The limiter paces a key at it from the first request (limiter/stated.ts).
import { ConfigError } from "../config/error";

/** Per minute; any may be absent. `output`: generated tokens alone, where the provider limits them apart (Vertex's Claude). */
export interface StatedQuota {
  requests?: number;
  tokens?: number;
  output?: number;
}

/** The provider's statement: its keys' default, and models' own (by the key's model, as the admin API lists it). */
export interface QuotaSpec extends StatedQuota {
  models?: Record<string, StatedQuota>;
}

const FIELDS = { requestsPerMinute: "requests", tokensPerMinute: "tokens", outputTokensPerMinute: "output" } as const;
/** Above any quota a cloud sells (Bedrock's largest default TPM is in the millions). */
const MOST = 1e10;

function limits(raw: unknown, where: string, models: boolean, apart: boolean): QuotaSpec {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new ConfigError(`${where} must be an object`);
  const out: QuotaSpec = {};
  for (const [field, v] of Object.entries(raw)) {
    if (models && field === "models") continue;
    const kind = Object.hasOwn(FIELDS, field) ? FIELDS[field as keyof typeof FIELDS] : null;
    if (!kind) throw new ConfigError(`${where} takes requestsPerMinute, tokensPerMinute, outputTokensPerMinute${models ? " and models" : ""}, not ${field.slice(0, 40)}`);
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || v > MOST) throw new ConfigError(`${where}.${field} must be a number above 0 and at most ${MOST}`);
    // A window nothing would draw from: this provider's tokens quota counts the output too.
    if (kind === "output" && !apart) throw new ConfigError(`${where}.${field}: this provider's tokensPerMinute counts output tokens too; state its quota there`);
    out[kind] = v;
  }
  return out;
}

/**
 * `PROVIDERS.<name>.quota` checked: `{requestsPerMinute?, tokensPerMinute?, outputTokensPerMinute?,
 * models?: {<model>: {...the same}}}`. `apart`: the provider's dialect counts output tokens apart
 * from its tokens quota (its `limits.output` or `promptOnly`), so it may be stated a quota of them.
 */
export function parseQuota(name: string, raw: unknown, apart: boolean): QuotaSpec {
  const where = `PROVIDERS.${name}.quota`;
  const spec = limits(raw, where, true, apart);
  const models = (raw as { models?: unknown }).models;
  if (models !== undefined) {
    if (typeof models !== "object" || models === null || Array.isArray(models)) throw new ConfigError(`${where}.models must be an object of model ids`);
    spec.models = {};
    for (const [model, m] of Object.entries(models)) spec.models[model] = limits(m, `${where}.models["${model.slice(0, 80)}"]`, false, apart);
  }
  return spec;
}

/**
 * What `spec` states for a key of `keyModel` (the key's model part): the model's own entry, else the
 * provider's; null when nothing. `scoped`: the provider's keys name a resource first (Bedrock's
 * region, Vertex's location: `us-east-1/<model>`), and an entry may name the model with it (that
 * region's quota) or without (every region's).
 */
export function statedFor(spec: QuotaSpec | undefined, keyModel: string, scoped = false): StatedQuota | null {
  if (!spec) return null;
  const names = scoped && keyModel.includes("/") ? [keyModel, keyModel.slice(keyModel.indexOf("/") + 1)] : [keyModel];
  const name = spec.models && names.find((n) => Object.hasOwn(spec.models!, n));
  const own = name ? spec.models![name]! : { requests: spec.requests, tokens: spec.tokens, output: spec.output };
  return own.requests === undefined && own.tokens === undefined && own.output === undefined ? null : own;
}
