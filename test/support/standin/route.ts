// Which dialect and endpoint a request path reaches. A gateway points each provider at the stand-in
// with a path prefix in its base URL (`<stand-in>/groq/openai`, `<stand-in>/gemini`,
// `<stand-in>/azure/{resource}`): the first segment names the dialect. Unprefixed paths keep the
// original routing by suffix (OpenAI, Anthropic, Azure's deployment paths), so `/v1/...` and
// `/openai/v1/...` both still reach OpenAI.
import { anthropic } from "./anthropic.ts";
import { azure, azurePath } from "./azure.ts";
import type { Dialect, DialectName } from "./dialect.ts";
import { gemini, geminiPath } from "./gemini.ts";
import { openai } from "./openai.ts";
import { vertexAnthropic, vertexDialect, vertexGemini, vertexPath } from "./vertex.ts";
import { deepseek, fireworks, geminiOpenai, groq, mistral, OPENAI_LIKE, openrouter, together, xai } from "./providers.ts";

export interface Target {
  dialect: Dialect;
  endpoint: string;
  /** The model the path names (Azure's deployment, Gemini's `models/<model>`), over the body's. */
  model?: string;
  /** The path says whether it streams (Gemini's streamGenerateContent), whatever the body says. */
  stream?: boolean;
  /** Azure's resource, part of a deployment's limit scope; Vertex's location. */
  resource?: string;
  /** Who a request counts against when the path names it (Vertex's project), over the credential (a token that rotates). */
  account?: string;
  /** The model its limits count against when not the one it names (Vertex's base model). */
  base?: string;
}

/** The first of `dialects` with an endpoint `path` ends with. */
function bySuffix(dialects: Dialect[], path: string): Target | null {
  for (const dialect of dialects) {
    for (const endpoint of Object.keys(dialect.endpoints)) if (path.endsWith(endpoint)) return { dialect, endpoint };
  }
  return null;
}

export function route(path: string, query = new URLSearchParams()): Target | null {
  const p = path.replace(/\/+$/, "");
  const v = vertexPath(p, query);
  if (v) return { dialect: vertexDialect(v), endpoint: v.endpoint, model: v.model, stream: v.stream, resource: v.location, account: v.project, base: v.base };
  const g = geminiPath(p, query);
  if (g) return { dialect: gemini, endpoint: g.endpoint, model: g.model, stream: g.stream };
  const prefix = /^\/([a-z]+)\//.exec(p)?.[1] ?? "";
  if (prefix === "gemini") return bySuffix([geminiOpenai], p);
  const row = Object.hasOwn(OPENAI_LIKE, prefix) ? OPENAI_LIKE[prefix] : undefined;
  if (row) return bySuffix([row], p);
  const az = azurePath(p);
  if (az) return { dialect: azure, endpoint: az.endpoint, model: az.deployment, resource: az.resource };
  return bySuffix([anthropic, openai], p);
}

/**
 * The account a request is counted against: its credential (Vertex: the project), and where the
 * dialect's limits hold per model, the model (Azure: resource and deployment; Vertex: location and base model).
 */
export function accountKey(target: Target, credential: string, model: string): string {
  return target.dialect.scope === "credential" ? credential : `${credential}\u0000${target.resource ?? ""}\u0000${target.base ?? model}`;
}

/** Every dialect by name: the simulator's provider (sim/provider.ts) speaks the one its shape names. */
export const STANDIN_DIALECTS: Readonly<Record<DialectName, Dialect>> = {
  openai, anthropic, azure, gemini, "gemini-openai": geminiOpenai, groq, mistral, openrouter, deepseek, together, fireworks, xai,
  "vertex-anthropic": vertexAnthropic, "vertex-gemini": vertexGemini,
};
