import { ConfigError, jsonObjectVar } from "../config/env";
import { DIALECTS, type DialectName } from "./dialects";
import { parseQuota } from "./quota";
import { BUILT_IN, FLAVOURS, type FlavourName, type Provider } from "./table";

const cache = new Map<string, Record<string, Provider>>();

/**
 * The built-in table with `PROVIDERS` merged over it. `PROVIDERS` is a JSON object (or a string
 * holding one) of `{name: {baseUrl, headers?, dialect?}}`; `headers` names the flavour (default: the
 * built-in's, else openai), `dialect` what its answers mean (default: the built-in's, so an override
 * of a built-in's base URL keeps it; else `generic`, which reads every header family), `quota` a
 * quota the operator knows (quota.ts). Parsed once per distinct value.
 */
export function providers(raw: unknown): Record<string, Provider> {
  const text = typeof raw === "string" ? raw : JSON.stringify(raw ?? {});
  const hit = cache.get(text);
  if (hit) return hit;
  const table: Record<string, Provider> = {};
  for (const [name, p] of Object.entries(BUILT_IN)) table[name] = { name, ...p };
  for (const [name, spec] of Object.entries(jsonObjectVar(raw, "PROVIDERS"))) {
    if (!/^[a-z0-9][a-z0-9_-]{0,62}$/.test(name)) throw new ConfigError("PROVIDERS: a provider name must be 1-63 lowercase letters, digits, - or _");
    if (name === "admin" || name === "healthz") throw new ConfigError(`PROVIDERS: ${name} is a reserved route`);
    if (typeof spec !== "object" || spec === null) throw new ConfigError(`PROVIDERS.${name} must be an object`);
    const { baseUrl, headers, dialect, quota } = spec as { baseUrl?: unknown; headers?: unknown; dialect?: unknown; quota?: unknown };
    const base = baseUrl ?? table[name]?.baseUrl;
    if (typeof base !== "string") throw new ConfigError(`PROVIDERS.${name}.baseUrl must be a string`);
    const flavour = headers ?? table[name]?.flavour ?? "openai";
    if (typeof flavour !== "string" || !Object.hasOwn(FLAVOURS, flavour))
      throw new ConfigError(`PROVIDERS.${name}.headers must be one of ${Object.keys(FLAVOURS).join(", ")}`);
    const speaks = dialect ?? table[name]?.dialect ?? "generic";
    if (typeof speaks !== "string" || !Object.hasOwn(DIALECTS, speaks))
      throw new ConfigError(`PROVIDERS.${name}.dialect must be one of ${Object.keys(DIALECTS).join(", ")}`);
    table[name] = { name, baseUrl: checkBase(name, base), flavour: flavour as FlavourName, dialect: speaks as DialectName, ...(quota !== undefined && { quota: parseQuota(name, quota, outputApart(DIALECTS[speaks as DialectName])) }) };
  }
  if (cache.size > 16) cache.clear();
  cache.set(text, table);
  return table;
}

/** Whether a dialect's tokens windows leave the output out (a window of its own, or none): a quota of it may be stated. */
const outputApart = (d: { limits: { output?: unknown; promptOnly?: true } }): boolean => !!(d.limits.output || d.limits.promptOnly);

function checkBase(name: string, base: string): string {
  let url: URL;
  try {
    url = new URL(base.replace("{resource}", "resource"));
  } catch {
    throw new ConfigError(`PROVIDERS.${name}.baseUrl is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ConfigError(`PROVIDERS.${name}.baseUrl must be http(s)`);
  if (url.search || url.hash || url.username || url.password) throw new ConfigError(`PROVIDERS.${name}.baseUrl must not carry a query, fragment or credentials`);
  return base.replace(/\/+$/, "");
}
