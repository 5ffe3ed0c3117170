/**
 * @module DRAFT for issue 41, registered nowhere: how each Vertex client builds its URL and
 * authenticates, read from its source (the versions in package-lock.json), and how a caller reaches
 * the gateway changing only its base URL and its key. Every `virtualKey` snippet here runs in
 * test/node/vertex-clients.test.ts against the stand-in, through a miniature of the Vertex path
 * (test/node/vertex-shim.ts), and so do the `ownToken` ones of the first two clients, with a service
 * account key's credentials where the snippet says ADC (the AI SDK's own-token line is not run:
 * it differs from its virtual-key line only by the credentials); `<gw>` is `https://<gateway>/vertex`.
 *
 * What every client shares: the project, the location and the model travel in the PATH
 * (`/projects/{p}/locations/{l}/publishers/{anthropic|google}/models/{m}:{verb}`); the credential is
 * `Authorization: Bearer <token>` that the client gets from google-auth-library; none of them can
 * skip Google auth with a plain option, so a virtual key rides as the token an `OAuth2Client` holds
 * (`new OAuth2Client({ credentials: { access_token: "sgk-..." } })`: google-auth-library sends an
 * access token without an expiry as it is, never refreshing it) or as express mode's API key.
 * google-auth-library posts every service account assertion to https://oauth2.googleapis.com/token
 * whatever the key's `token_uri` says (its gtoken `GOOGLE_TOKEN_URL`), so a caller's own token is
 * always Google's; the gateway passes it through.
 */
export interface ClientFacts {
  /** Where the URL comes from and what the client appends. */
  url: string;
  /** How it authenticates. */
  auth: string;
  /** A virtual-key caller's configuration (only the base URL and the key differ from a direct caller's). */
  virtualKey: string;
  /** A caller with its own Google credentials, through the gateway. */
  ownToken: string;
  /** What the gateway must know of it. */
  notes: string;
}

export const CLIENTS: Readonly<Record<string, ClientFacts>> = {
  /** @anthropic-ai/vertex-sdk 1.1.3, `src/client.ts` (class AnthropicVertex, `#adaptRequest`). */
  "@anthropic-ai/vertex-sdk": {
    url:
      "baseURL (default by region: global https://aiplatform.googleapis.com/v1, us/eu https://aiplatform.{us|eu}.rep.googleapis.com/v1, else https://{region}-aiplatform.googleapis.com/v1) " +
      "+ /projects/{projectId}/locations/{region}/publishers/anthropic/models/{model}:rawPredict | :streamRawPredict (by the body's `stream`); " +
      "the canonical /v1/messages suffix is replaced, so any prefix in baseURL stays. `model` leaves the body; `anthropic_version` is set from the anthropic-version header (\"2026-10-21\"), which is dropped.",
    auth:
      "`googleAuth` (a GoogleAuth) or `authClient` (an AuthClient); default new GoogleAuth({ scopes: cloud-platform }) (ADC). Every request calls authClient.getRequestHeaders(); " +
      "request headers (defaultHeaders) win over them. `region` and `projectId` are required (projectId may come from the credentials). " +
      "`accessToken` is accepted and stored but never read (1.1.3): it does not authenticate.",
    virtualKey: 'new AnthropicVertex({ baseURL: "<gw>/v1", region: "us-east5", projectId: "any", authClient: new OAuth2Client({ credentials: { access_token: "sgk-..." } }) })',
    ownToken: 'new AnthropicVertex({ baseURL: "<gw>/v1", region: "global", projectId: "my-project", googleAuth: new GoogleAuth({ scopes: "https://www.googleapis.com/auth/cloud-platform" }) })',
    notes: "region and projectId are in the path; for a virtual key they mean nothing and the gateway puts its member's in. Retries 429/529/5xx itself (maxRetries, default 2).",
  },
  /** @google/genai 3.3.0, dist/node/index.mjs: class GoogleGenAI, ApiClient (constructor, constructUrl), NodeAuth. */
  "@google/genai": {
    url:
      "vertexai: true. httpOptions.baseUrl (else GOOGLE_VERTEX_BASE_URL, else by location: global or express https://aiplatform.googleapis.com/, us/eu https://aiplatform.{l}.rep.googleapis.com/, else https://{l}-aiplatform.googleapis.com/) " +
      "+ {apiVersion, default v1beta1} + /projects/{project}/locations/{location} (only when project and location are given) + /publishers/google/models/{model}:generateContent | :streamGenerateContent?alt=sse (streams are always SSE). " +
      "With a custom baseUrl and no project/location/apiKey given to the constructor, the path has no project and location.",
    auth:
      "apiKey (express mode: header x-goog-api-key, no project in the path) or googleAuthOptions, handed to new GoogleAuth() (scopes default cloud-platform; `authClient` is taken as is). " +
      "NodeAuth.addGoogleAuthHeaders skips a header already set by httpOptions.headers, but still asks GoogleAuth for headers, so credentials are needed either way.",
    virtualKey:
      'new GoogleGenAI({ vertexai: true, project: "any", location: "us-central1", httpOptions: { baseUrl: "<gw>" }, googleAuthOptions: { authClient: new OAuth2Client({ credentials: { access_token: "sgk-..." } }) } }); ' +
      'or express mode: new GoogleGenAI({ vertexai: true, apiKey: "sgk-...", httpOptions: { baseUrl: "<gw>" } })',
    ownToken: 'new GoogleGenAI({ vertexai: true, project: "my-project", location: "europe-west4", httpOptions: { baseUrl: "<gw>" } })  // ADC, or googleAuthOptions',
    notes: "No retries unless httpOptions.retryOptions is set. Express mode's path (/v1beta1/publishers/google/models/...) names no project: the gateway must insert its member's.",
  },
  /** @ai-sdk/google-vertex 5.0.141: src/google-vertex-provider(-base).ts, src/anthropic/google-vertex-anthropic-provider(-node).ts, src/edge/google-vertex-auth-edge.ts. */
  "@ai-sdk/google-vertex": {
    url:
      "Gemini (createVertex): baseURL replaces https://{host}/v1beta1/projects/{project}/locations/{location}/publishers/google (express: https://aiplatform.googleapis.com/v1/publishers/google), then /models/{model}:generateContent | :streamGenerateContent?alt=sse. " +
      "Claude (createVertexAnthropic): baseURL replaces https://{host}/v1/projects/{project}/locations/{location}/publishers/anthropic/models, then /{model}:rawPredict | :streamRawPredict; the body loses `model` and gets anthropic_version \"vertex-2023-10-16\".",
    auth:
      "Node: headers get Authorization: Bearer <google-auth-library token> from googleAuthOptions (Claude also takes generateAuthToken), then options.headers over it; apiKey (Gemini) switches to express mode with x-goog-api-key and no Google auth. " +
      "Edge (/edge): mints its own tokens with WebCrypto from googleCredentials {clientEmail, privateKey, privateKeyId}, posting to https://oauth2.googleapis.com/token.",
    virtualKey:
      'createVertex({ baseURL: "<gw>/v1beta1/projects/any/locations/us-central1/publishers/google", googleAuthOptions: { authClient: new OAuth2Client({ credentials: { access_token: "sgk-..." } }) } }); ' +
      'createVertex({ apiKey: "sgk-...", baseURL: "<gw>/v1/publishers/google" }); ' +
      'createVertexAnthropic({ baseURL: "<gw>/v1/projects/any/locations/us-east5/publishers/anthropic/models", generateAuthToken: async () => "sgk-..." })',
    ownToken: 'createVertex({ project: "my-project", location: "us-central1", baseURL: "<gw>/v1beta1/projects/my-project/locations/us-central1/publishers/google" })  // ADC',
    notes: "baseURL carries the project and location, so a virtual-key caller writes any; the AI SDK's own retries (maxRetries) apply.",
  },
};
