// POOLS: named pools of provider keys, each key held in a Worker secret named by its member.
// A malformed pool is refused whole, naming the field or the secret, never a secret's value.
import { ConfigError, jsonObjectVar } from "../config/env";
import { type Address, baseWith, POOLS_NAME, readAddress } from "../providers/address";
import { baseFor } from "../providers/url";
import { readServiceAccountKey } from "../providers/auth/service-account";
import { kindsOf, secretsOf, sendFor } from "../providers/credential";
import type { CredentialSend } from "../providers/flavour";
import { FLAVOURS, type FlavourName, type Provider } from "../providers/table";

export interface Member {
  name: string;
  /** The member's own provider: the pool's, or one with the same wire format (an Azure deployment in an OpenAI pool). */
  provider: Provider;
  /** The name of the secret (or secrets, comma-separated) that holds its credential (shown in admin answers); the values are `credential` and `secrets`. */
  secret: string;
  /** How its credential goes upstream: its row's first kind whose secrets it gives. */
  send: CredentialSend;
  /** A single secret's value (a key, a service account key file); "" when it has several. */
  credential: string;
  /** Several secrets' values by the names its kind reads them by (SigV4's accessKeyId, secretAccessKey, sessionToken). */
  secrets?: Readonly<Record<string, string>>;
  /** Its own address, where its family's row gives members one (an Azure deployment's resource, deployments and api-version). */
  address?: Address;
}

export interface Pool {
  name: string;
  provider: string;
  /** The family its callers speak (its provider's flavour): a member of another serves them through its row's wire. */
  family: FlavourName;
  members: Member[];
  /** Its virtual keys read each other's cache entries (a key's own `cache` setting still wins). Default: each key its own. */
  sharedCache: boolean;
}

/** The gateway's own secrets are never a member's key. */
const RESERVED = new Set(["ADMIN_TOKEN", "GATEWAY_TOKENS", "VIRTUAL_KEY_SECRET"]);
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

const cache = new WeakMap<object, { raw: unknown; table: Record<string, Provider>; pools: Record<string, Pool> }>();

/**
 * The pools, parsed once per isolate's env (vars and secrets do not change within one). `env` is
 * where each member's secret is found, by its name.
 */
export function poolsOf(raw: unknown, table: Record<string, Provider>, env: object): Record<string, Pool> {
  const hit = cache.get(env);
  if (hit && hit.raw === raw && hit.table === table) return hit.pools;
  const secrets = env as Record<string, unknown>;
  const pools: Record<string, Pool> = {};
  for (const [name, spec] of Object.entries(jsonObjectVar(raw, "POOLS"))) pools[name] = parsePool(name, spec, table, secrets);
  cache.set(env, { raw, table, pools });
  return pools;
}

function parsePool(name: string, spec: unknown, table: Record<string, Provider>, secrets: Record<string, unknown>): Pool {
  const at = `POOLS.${name}`;
  if (!POOLS_NAME.test(name)) throw new ConfigError("POOLS: a pool name must be 1-64 of A-Z a-z 0-9 . _ -");
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) throw new ConfigError(`${at} must be an object`);
  const { provider, members, sharedCache } = spec as { provider?: unknown; members?: unknown; sharedCache?: unknown };
  if (typeof provider !== "string" || !Object.hasOwn(table, provider)) throw new ConfigError(`${at}.provider must name a provider`);
  if (!Array.isArray(members) || members.length === 0) throw new ConfigError(`${at}.members must be a non-empty array`);
  if (sharedCache !== undefined && typeof sharedCache !== "boolean") throw new ConfigError(`${at}.sharedCache must be true or false`);
  const pool: Pool = { name, provider, family: table[provider]!.flavour, members: [], sharedCache: sharedCache === true };
  const seen = new Set<string>();
  members.forEach((m, i) => {
    const member = parseMember(`${at}.members[${i}]`, m, table[provider]!, table, secrets);
    if (seen.has(member.name)) throw new ConfigError(`${at}.members[${i}].name ${JSON.stringify(member.name)} is used twice`);
    seen.add(member.name);
    pool.members.push(member);
  });
  return pool;
}

function parseMember(at: string, spec: unknown, poolProvider: Provider, table: Record<string, Provider>, secrets: Record<string, unknown>): Member {
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) throw new ConfigError(`${at} must be an object`);
  const m = spec as Record<string, unknown>;
  if (typeof m.name !== "string" || !POOLS_NAME.test(m.name)) throw new ConfigError(`${at}.name must be 1-64 of A-Z a-z 0-9 . _ -`);
  const providerName = m.provider ?? poolProvider.name;
  if (typeof providerName !== "string" || !Object.hasOwn(table, providerName)) throw new ConfigError(`${at}.provider must name a provider`);
  let provider = table[providerName]!;
  if (!(FLAVOURS[poolProvider.flavour].compatible ?? [poolProvider.flavour]).includes(provider.flavour))
    throw new ConfigError(`${at}.provider ${providerName} does not speak the pool's wire format (${poolProvider.name})`);
  if (m.baseUrl !== undefined) provider = { ...provider, baseUrl: memberBase(at, m.baseUrl) };
  const member: Member = { name: m.name, provider, ...readSecrets(at, m, FLAVOURS[provider.flavour].send, secrets) };
  const shape = FLAVOURS[provider.flavour].member;
  if (shape) {
    const address = (member.address = readAddress(at, m, shape, m.baseUrl !== undefined));
    // Its limits are per resource: the resource stays in its keys (providers/key.ts).
    if (address.resource) member.provider = { ...provider, baseUrl: baseFor(baseWith(provider.baseUrl, address), FLAVOURS[provider.flavour].host, address.resource), resource: address.resource };
  }
  return member;
}

/** A secret's name in POOLS: a Worker secret of its own, never one of the gateway's. */
function secretName(at: string, raw: unknown): string {
  if (typeof raw !== "string" || !SECRET_NAME.test(raw) || RESERVED.has(raw)) throw new ConfigError(`${at} must name a Worker secret (letters, digits, _), not one of the gateway's own`);
  return raw;
}

function secretValue(at: string, name: string, member: unknown, secrets: Record<string, unknown>): string {
  const v = secrets[name];
  if (typeof v !== "string" || v === "") throw new ConfigError(`the secret ${name} (${at}, member ${String(member)}) is not set: wrangler secret put ${name}`);
  return v;
}

/**
 * The member's credential: one `secret` (a key), or `secrets` naming each of several by what its
 * kind reads (`{"accessKeyId": "AWS_KEY_ID_A", "secretAccessKey": "AWS_SECRET_A"}`); its row's
 * first kind they fit. A service account key is read (and refused, naming the field) here, never shown.
 */
function readSecrets(at: string, m: Record<string, unknown>, kinds: CredentialSend | readonly CredentialSend[], secrets: Record<string, unknown>): Pick<Member, "secret" | "send" | "credential" | "secrets"> {
  const many = m.secrets;
  if (many !== undefined && (typeof many !== "object" || many === null || Array.isArray(many))) throw new ConfigError(`${at}.secrets must be an object of secret names`);
  const named = many ? Object.entries(many as Record<string, unknown>).map(([k, v]) => [k, secretName(`${at}.secrets.${k}`, v)] as const) : [["secret", secretName(`${at}.secret`, m.secret)] as const];
  const send = sendFor(kinds, named.map(([k]) => k));
  if (!send) throw new ConfigError(`${at}: its provider takes ${kindsOf(kinds).map((c) => secretsOf(c).join(" and ")).join(", or ")} as its secrets`);
  const values = Object.fromEntries(named.map(([k, name]) => [k, secretValue(at, name, m.name, secrets)]));
  if (send.kind === "service-account") {
    try {
      readServiceAccountKey(values.secret);
    } catch (err) {
      throw new ConfigError(`the secret ${named[0]![1]} (${at}, member ${String(m.name)}) is not a service account key: ${err instanceof Error ? err.message : "unreadable"}`);
    }
  }
  const secret = named.map(([, name]) => name).join(",");
  return many ? { secret, send, credential: "", secrets: values } : { secret, send, credential: values.secret! };
}

function memberBase(at: string, raw: unknown): string {
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    throw new ConfigError(`${at}.baseUrl is not a URL`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.username || url.password)
    throw new ConfigError(`${at}.baseUrl must be an http(s) URL without query or credentials`);
  return url.href.replace(/\/+$/, "");
}

/** Whether the pool's members can serve a request sent to route `provider`. */
export function serves(pool: Pool, provider: Provider): boolean {
  return pool.provider === provider.name;
}

