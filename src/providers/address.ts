/**
 * @module A pool member's own address, read as its flavour row's `member` column says (Azure's:
 * a resource in the host, a deployment per model in the path, an api-version in the query): the
 * fields a POOLS entry must give, checked once, and the path and query one request goes to.
 */
import { ConfigError } from "../config/error";
import type { MemberShape } from "./flavour";

/** A name in POOLS (a pool's, a member's, a deployment's): 1-64 of A-Z a-z 0-9 . _ - */
export const POOLS_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** What a member's POOLS entry gave for its row's fields. */
export interface Address {
  fields: Record<string, string>;
  /** The member's name for each model callers name, where its row maps them. */
  models?: Record<string, string>;
  /** The field that names its resource (its limits are per resource), lowercased. */
  resource?: string;
  /** The field that names whose limits it counts against (an account, a project). */
  identity?: string;
}

/**
 * The fields of POOLS entry `m` (at `at`) as `shape` wants them; a ConfigError naming the field
 * otherwise. `ownBase`: the member gives its own baseUrl, so no resource is needed for its host.
 */
export function readAddress(at: string, m: Record<string, unknown>, shape: MemberShape, ownBase: boolean): Address {
  const a: Address = { fields: {} };
  for (const [field, spec] of Object.entries(shape.fields)) {
    const v = m[field];
    if (spec.kind === "models") {
      if (v === undefined && spec.optional) continue;
      if (typeof v !== "object" || v === null || Array.isArray(v) || Object.keys(v).length === 0) throw new ConfigError(`${at}.${field} must ${spec.says}`);
      for (const [model, name] of Object.entries(v)) if (typeof name !== "string" || !spec.check.test(name)) throw new ConfigError(`${at}.${field}.${model} must be ${spec.each}`);
      a.models = v as Record<string, string>;
      continue;
    }
    // A member with its own base URL needs no resource for its host (one given still names its limits and path).
    if (spec.resource && ownBase && v === undefined) continue;
    const value = v ?? spec.default;
    if (typeof value !== "string" || !spec.check.test(value)) throw new ConfigError(`${at}.${field} must be ${spec.says}`);
    // A resource names a host, whose case does not matter: one spelling, so one key.
    a.fields[field] = spec.resource ? value.toLowerCase() : value;
    if (spec.resource) a.resource = a.fields[field];
    if (spec.identity) a.identity = value;
  }
  return a;
}

/** `template` with each `{name}` replaced by what `value` gives for it (undefined: left as it is). */
const fill = (template: string, value: (name: string) => string | undefined) => template.replace(/\{(\w+)\}/g, (whole, k: string) => value(k) ?? whole);

/** `baseUrl` with the address's fields in its `{field}` places. */
export const baseWith = (baseUrl: string, a: Address): string => fill(baseUrl, (k) => a.fields[k]);

/** The model a request names for a member: its path's `model` group (decoded), else its body's `model`. */
export function askedModel(groups: Record<string, string | undefined>, body: unknown): string | null {
  if (groups.model !== undefined) {
    try {
      return decodeURIComponent(groups.model);
    } catch {
      return null;
    }
  }
  const asked = typeof body === "object" && body !== null ? (body as { model?: unknown }).model : undefined;
  return typeof asked === "string" ? asked : null;
}

/** The member's name for the model a request names: as mapped where its address maps models (null: it has none for it), else as named. */
export function memberModel(a: Address, asked: string | null): string | null {
  if (!a.models) return asked;
  return asked !== null && Object.hasOwn(a.models, asked) ? a.models[asked]! : null;
}

/**
 * The member's path and query for the caller's `rest` (the path after the provider), or null
 * when the member cannot serve it: no name for the model the request names, or a path its row
 * does not take.
 */
export function addressOf(shape: MemberShape, a: Address, rest: string, body: unknown): { path: string; query: [string, string][] } | null {
  const rules = Array.isArray(shape.path) ? shape.path : [shape.path as { from: RegExp; to: string }];
  for (const rule of rules) {
    const groups = rule.from.exec(rest)?.groups;
    if (!groups) continue;
    // A model the member maps is written anew (encoded); one it takes as named stays as the caller wrote it in the path.
    const model = a.models ? memberModel(a, askedModel(groups, body)) : null;
    if (a.models && model === null) return null;
    const value = (k: string) => (k === "model" && model !== null ? encodeURIComponent(model) : (groups[k] ?? a.fields[k] ?? ""));
    return { path: fill(rule.to, value), query: Object.entries(shape.query).map(([k, v]) => [k, fill(v, value)]) };
  }
  return null;
}

/** `template` with `{name}` filled from `values` (a member's fields and its model, encoded where asked). */
export const filled = (template: string, values: Record<string, string>) => fill(template, (k) => values[k]);
