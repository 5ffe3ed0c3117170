// One Claude model on three clouds in one pool (issue 41, item 6), as the end-to-end test and the
// benchmark run it: an Anthropic member (a key, quota with headers), a Bedrock member (IAM keys the
// gateway signs with, quota per account, region and model with no headers) and a Vertex member (a
// service account key the stand-in made, quota per project, location and model with no headers),
// each with its own requests-per-minute on the one stand-in; the gateway's PROVIDERS and POOLS for
// them, and what the stand-in counted per member. The POOLS here is the one docs/pools-and-virtual-keys.md shows.
import { randomBytes } from "node:crypto";
import type { Standin, StandinOptions, Stats } from "./standin/index.ts";

export const MODEL = "claude-haiku-4-5";
/** Bedrock's US cross-region inference profile for Claude Haiku 4.5 (userguide/inference-profiles-support). */
export const BEDROCK_ID = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
/** Vertex's id for it (cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude). */
export const VERTEX_ID = "claude-haiku-4-5@20251001";
export const REGION = "us-east-1";
export const ACCOUNT = "210987654321";
export const PROJECT = "clouds-evals";
export const LOCATION = "us-east5";
export const POOL = "claude-clouds";

export type Cloud = "anthropic" | "bedrock" | "vertex";
export const CLOUDS: readonly Cloud[] = ["anthropic", "bedrock", "vertex"];

/**
 * USD per million tokens each member's answers are priced at: Anthropic's list price for Claude
 * Haiku 4.5, Bedrock's regional (a `us.` profile: 10% over the list, src/providers/prices.ts), and
 * for Vertex the contract price `PRICES` below gives it, so that each member's price differs.
 */
export const RATES: Record<Cloud, { input: number; output: number }> = { anthropic: { input: 1, output: 5 }, bedrock: { input: 1.1, output: 5.5 }, vertex: { input: 0.9, output: 4.5 } };

const hex = (n: number) => randomBytes(n).toString("hex");

/** Fresh per run: the stand-in's credentials for the three members. */
export interface CloudCredentials {
  anthropicKey: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export const newCredentials = (): CloudCredentials => ({
  anthropicKey: `sk-ant-clouds-${hex(12)}`,
  accessKeyId: `AKIA${hex(8).toUpperCase()}`,
  secretAccessKey: `clouds-secret/${hex(16)}`,
});

/** Each member's quota at the stand-in: requests per minute, its bucket holding `burst` of a minute. */
export type Quotas = Record<Cloud, { rpm: number; burst: number }>;

/**
 * The stand-in's options: each member's quota (Anthropic's by key, Vertex's by project, Bedrock's by
 * account, region and model id: its bucket is the stand-in's global `burst`), no global limits.
 */
export function cloudsStandin(c: CloudCredentials, q: Quotas, o: Partial<StandinOptions> = {}): Partial<StandinOptions> {
  return {
    rpm: 0, tpm: 0, headers: true, burst: q.bedrock.burst,
    keyLimits: { [c.anthropicKey]: q.anthropic, [PROJECT]: q.vertex },
    bedrock: {
      accounts: [{ id: ACCOUNT, keys: [{ accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey }], apiKeys: [] }],
      region: REGION, limits: { [`${ACCOUNT}/${REGION}/${BEDROCK_ID}`]: { rpm: q.bedrock.rpm } }, faults: {}, streamFaults: {},
    },
    ...o,
  };
}

/** `PROVIDERS`: Anthropic, Bedrock (each region a path prefix) and Vertex at the stand-in. */
export const cloudsProviders = (url: string) => ({ anthropic: { baseUrl: url }, bedrock: { baseUrl: `${url}/bedrock/{resource}` }, vertex: { baseUrl: url } });

/** The cross-cloud pool as POOLS takes it: the Bedrock and Vertex members name the model by their own ids. */
export const CLOUDS_POOLS = {
  [POOL]: {
    provider: "anthropic",
    members: [
      { name: "claude-api", secret: "ANTHROPIC_KEY" },
      { name: "aws-east", provider: "bedrock", region: REGION, account: ACCOUNT, secrets: { accessKeyId: "AWS_KEY_ID", secretAccessKey: "AWS_SECRET" }, models: { [MODEL]: BEDROCK_ID } },
      { name: "gcp-east", provider: "vertex", project: PROJECT, location: LOCATION, secret: "VERTEX_SA_KEY", models: { [MODEL]: VERTEX_ID } },
    ],
  },
};

/** The member names in CLOUDS_POOLS, by cloud. */
export const MEMBER: Record<Cloud, string> = { anthropic: "claude-api", bedrock: "aws-east", vertex: "gcp-east" };

/**
 * The gateway's vars: POOLS, the members' secrets (the Vertex one a service account key the
 * stand-in made, its token_uri the stand-in's), and Vertex's price for the model.
 */
export function cloudsVars(standin: Standin, c: CloudCredentials): Record<string, string> {
  const sa = standin.serviceAccount({ project: PROJECT, name: "evals" });
  return {
    POOLS: JSON.stringify(CLOUDS_POOLS),
    ANTHROPIC_KEY: c.anthropicKey, AWS_KEY_ID: c.accessKeyId, AWS_SECRET: c.secretAccessKey, VERTEX_SA_KEY: JSON.stringify(sa),
    PRICES: JSON.stringify({ [`vertex:${MODEL}`]: RATES.vertex }),
  };
}

export interface Served {
  answers: number;
  input: number;
  output: number;
}

/**
 * What the stand-in served each member, as its answers reported it: Anthropic's by key, Vertex's by
 * project (`usageBy`, the model as its path names it), Bedrock's by account and model id.
 */
export function servedBy(s: Stats, c: CloudCredentials): Record<Cloud, Served> {
  const none = { answers: 0, input: 0, output: 0 };
  return {
    anthropic: s.usageBy[c.anthropicKey]?.[MODEL] ?? none,
    bedrock: s.bedrock[ACCOUNT]?.[BEDROCK_ID] ?? none,
    vertex: s.usageBy[PROJECT]?.[VERTEX_ID] ?? none,
  };
}

/** Refused upstream (429) per member, from the stand-in's attempt log. */
export function refusedBy(s: Stats, c: CloudCredentials): Record<Cloud, number> {
  const of = (who: string) => s.log.filter((a) => a.credential === who && a.status === 429).length;
  return { anthropic: of(c.anthropicKey), bedrock: s.log.filter((a) => a.provider === "bedrock" && a.status === 429).length, vertex: of(PROJECT) };
}

/** What `served` costs at each member's rate (USD). */
export const costOf = (cloud: Cloud, s: Served) => (s.input * RATES[cloud].input + s.output * RATES[cloud].output) / 1e6;
