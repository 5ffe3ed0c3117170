/**
 * @module What an API family (a flavour: OpenAI's, Anthropic's, Gemini's, Azure OpenAI's wire)
 * says, as one row of data: how a credential is named and sent, which families' members a pool
 * of it may take, a pool member's address, the headers the gateway treats apart, what bills
 * apart from tokens, its batch routes and how its streams end. The rows are in table.ts; code reads them, and never
 * a family's or a provider's name.
 */

/**
 * How a pool member's credential goes upstream: in a header (the kind when none is named;
 * `scheme`: `Bearer <secret>`), in a query parameter, or made by the gateway for each attempt:
 * `sigv4`, an AWS Signature Version 4 with the member's IAM credentials (its secrets
 * `accessKeyId`, `secretAccessKey` and optionally `sessionToken`) for `service` in the member's
 * region; `service-account`, an OAuth access token minted from the member's service account key (its
 * secret, the key file's JSON) and sent as a bearer token. Each kind has its entry in
 * providers/credential.ts.
 */
export type CredentialSend =
  | { kind?: "header"; header: string; scheme?: "Bearer" }
  | { kind: "query"; param: string }
  | { kind: "sigv4"; service: string; secrets: readonly string[]; optional?: readonly string[] }
  | { kind: "service-account" };

/**
 * Where a caller's path names the part of its provider's host that varies: Azure's resource and
 * Bedrock's region (the path's first segment, taken off), Vertex's location (kept in the path).
 * The base URL's `{resource}` takes it.
 */
export interface HostPart {
  from: RegExp;
  /** The segment is the gateway's, not the provider's: it is taken off the path. */
  strip: boolean;
  check: RegExp;
  /**
   * Values whose host is written otherwise: `[text, instead]` replaces `text` of the base URL
   * before `{resource}` is filled (Vertex's `global` endpoint has no location in its host, its
   * `us` and `eu` multi-regions another name). A base URL without `text` (a `PROVIDERS` one
   * pointing elsewhere) takes the value in `{resource}` as any other: never a host it did not name.
   */
  hosts?: Readonly<Record<string, readonly [text: string, instead: string]>>;
  /** The value when the path names none (Vertex's express mode, whose path has no location: the global endpoint); absent: such a path is refused. */
  otherwise?: string;
}

/**
 * How a member of this family serves a request of another family in the same wire shape (Claude
 * on Bedrock's InvokeModel or Vertex's rawPredict for a request to Anthropic's Messages API): the
 * caller's route it takes, the member's path (`{model}`: the member's name for the model, `{x}`:
 * a field of its address), its path when the request streams, the body's fields it drops and sets,
 * request headers that move into the body (an array), and how its streamed answer is framed
 * (`eventstream`: Bedrock's event-stream frames, each chunk's payload one event of the caller's
 * family: given back as server-sent events, an exception frame as the caller's family's `error`
 * event, its type as `exceptions` names it, else `api_error`).
 */
export interface Wire {
  from: RegExp;
  path: string;
  streamPath: string;
  drop: readonly string[];
  set: Readonly<Record<string, unknown>>;
  headersToBody?: Readonly<Record<string, string>>;
  stream?: "eventstream";
  exceptions?: Readonly<Record<string, string>>;
}

/**
 * Header spellings, lowercase: one ending in `-` is a prefix (a family of headers), any other a
 * whole name.
 */
export type Spellings = readonly string[];

/** The headers of a family's requests and answers that the gateway treats apart from the rest (a family absent: none). */
export interface HeaderFamilies {
  /** Answer headers telling the provider's rate-limit state: renamed on a success, never replayed from the cache, never shown from a pool's member. */
  quota?: Spellings;
  /** Answer headers saying whose account answered (an org, a project): never stored by the cache, never shown from a pool's member. */
  account?: Spellings;
  /** Answer headers describing the provider at the time, not the answer (a processing time): never replayed from the cache. */
  timing?: Spellings;
  /** Answer headers that tell a pool's members apart besides their quota (a region, a deployment, a request id of the member's front): never shown from a member. */
  member?: Spellings;
  /** Request headers that change the answer (an API version, betas, a field mask): part of the cache key. */
  semantic?: Spellings;
}

/**
 * What a budget reads to price a family's request (budget/priceable.ts). `counts`: its
 * token-count endpoints (free, and limited apart from generation: providers/key.ts). `toolFees`:
 * server-side tools billed per use, which `usage` tokens do not show (as a tool's `type`, or the
 * key a tool is set under). `perUse`: body fields that bill per use the same way.
 */
export interface PricingRules {
  counts: RegExp;
  toolFees: RegExp;
  perUse: readonly string[];
}

/** A request on the batch or file endpoints the gateway tracks (batches/ops.ts). */
export type BatchOpKind = "upload" | "files" | "create" | "list" | "file" | "content" | "unfile" | "batch" | "cancel" | "results" | "unbatch";

/**
 * A family's batch API, as the gateway keeps a virtual key to its own batches and meters their
 * results (src/batches/).
 */
export interface BatchRoutes {
  /** `METHOD path op` rows, `;`-separated, after `prefix`; `{id}` is the batch or file named. */
  ops: string;
  /** What comes before each path (a pattern): a version segment, optional where the endpoint table makes it so. */
  prefix: string;
  /**
   * How a batch's requests come: `file` (a JSONL file uploaded first, named by the create's
   * `input_file_id`; results in an output file) or `inline` (the create's `requests[].params`;
   * results at the batch's own results path).
   */
  input: "file" | "inline";
  /** The paths the gateway reads itself from the member that holds a batch: the batch, and its results (`{output}`: its output file). */
  read: { batch: string; results: string };
  /** The batch object's `results_url` names the provider's host: the caller is sent back through the gateway's `read.results` instead. */
  resultsUrl?: boolean;
  /** A list answer's fields before `data` (OpenAI's `"object":"list",`). */
  listHead: string;
  /** The files endpoint, where the family's batches read their input from one (`/v1/files`). */
  files?: string;
}

/**
 * One field of a pool member's POOLS entry beside name, secret, provider and baseUrl: a text
 * (put in the base URL's `{field}`, the member's path and query), or the member's own name for
 * each model callers name (Azure's deployments).
 */
export type MemberField =
  | {
      /** A text: the kind when none is named. */
      kind?: "text";
      check: RegExp;
      /** What it must be, as the ConfigError says it. */
      says: string;
      /** Its value when the member names none; without one it is required. */
      default?: string;
      /**
       * It names the member's resource, in its host: lowercased, put in the base URL's `{field}`
       * and kept in the member's limit keys (limits are per resource: providers/key.ts); not
       * needed where the member gives its own baseUrl.
       */
      resource?: boolean;
      /**
       * It names whose limits the member's requests count against (Bedrock's account, Vertex's
       * project): the member's limit keys carry its hash in place of the credential's, so a
       * rotating or second credential of the same account shares its limiter.
       */
      identity?: boolean;
    }
  | { kind: "models"; check: RegExp; says: string; each: string; optional?: boolean };

/**
 * A pool member's own address, where its family's differs from its provider's base URL and the
 * caller's path (Azure: the resource in the host, a deployment per model in the path, an
 * api-version in the query; Bedrock: a region; Vertex: a project and a location). `{x}` in a
 * path's `to` and in `query` is a group of its `from`, a text field, or `model`: the member's name
 * for the model the request names (in its body, or the `model` group of the path), encoded. The
 * first path rule whose `from` matches the caller's path is the member's.
 */
export interface MemberShape {
  /** Checked in this order. */
  fields: Readonly<Record<string, MemberField>>;
  path: { from: RegExp; to: string } | readonly { from: RegExp; to: string }[];
  query: Readonly<Record<string, string>>;
}

export interface Flavour {
  /** The family's name as the gateway's messages write it. */
  title: string;
  /** Headers whose values identify the credential (hashed into the key, never stored). */
  credentialHeaders: readonly string[];
  /** Query parameters that may carry the credential instead (Gemini's `?key=`); absent: none. */
  credentialParams?: readonly string[];
  /** Headers that scope a credential to an org or project: part of the key; absent: none. */
  scopeHeaders?: readonly string[];
  /** How a pool member's credential is sent: the first kind whose secrets the member gives. */
  send: CredentialSend | readonly CredentialSend[];
  /** Where a caller's path names the varying part of the host; absent: a `{resource}` base URL takes the path's first segment. */
  host?: HostPart;
  /**
   * Where a caller's path names whose limits it counts against (its group 1: Vertex's project).
   * A caller's own credential is keyed by it, as a pool member naming it is, once the provider
   * has answered that credential there with a 2xx (proxy/proofs.ts); until then, and on a path
   * that names none, by the credential's own hash. A token that rotates keeps one limiter, and a
   * stranger naming another's project never reaches its limiter. Absent: always the credential's.
   */
  identity?: RegExp;
  /** How its members serve other families' requests (a cross-cloud pool), by the caller's family. */
  wires?: Readonly<Record<string, Wire>>;
  /** Headers every request of the family carries, which the gateway's own requests and the CLI's set (Anthropic's API version). */
  fixed?: Readonly<Record<string, string>>;
  /** Where the model name is: the JSON body's `model`, or a path segment (`.../models/<m>:verb`, `.../deployments/<m>/`, `/model/<m>/`). */
  model: "body" | "gemini-path" | "azure-path" | "bedrock-path";
  /** The families (by their names in the table) whose members a pool of this one may take, their wire formats matching; absent: its own only. */
  compatible?: readonly string[];
  /** A pool member's address, where it is not its provider's base URL and the caller's path. */
  member?: MemberShape;
  headers: HeaderFamilies;
  /** What only a stream's last event holds (each family's stream ends differently): a stream the cache captured without one was cut short. */
  streamEnds: readonly string[];
  pricing: PricingRules;
  /** Its batch API, where the gateway keeps each virtual key to its own batches. */
  batches?: BatchRoutes;
  /** What an uploaded file's URI looks like in a request body, where the family names files by URI (a stored object: stored/refs.ts). */
  fileUri?: RegExp;
}
