// The flavour rows' columns (issue 40 item 2) and their small readers: credentials, a pool member's
// address, the header families gathered over the rows, batch routes.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/error";
import { batchRoutes, opOf, readPath, TRACKED } from "../../src/batches/ops";
import { addressOf, baseWith, readAddress } from "../../src/providers/address";
import { credentialHeadersOf, placeCredential } from "../../src/providers/credential";
import type { MemberShape } from "../../src/providers/flavour";
import {
  ACCOUNT_HEADERS, CREDENTIAL_AND_SCOPE_HEADERS, CREDENTIAL_HEADERS, CREDENTIAL_PARAMS, MEMBER_HEADERS, QUOTA_HEADERS, SEMANTIC_HEADERS, spelled, STREAM_ENDS,
} from "../../src/providers/headers";
import { BUILT_IN, FLAVOURS, type FlavourName, GENAI_NAMES } from "../../src/providers/table";
import { hideMember } from "../../src/proxy/pooled";

describe("the flavour rows", () => {
  it("name only flavours as compatible, and each pool takes its own family", () => {
    for (const [name, f] of Object.entries(FLAVOURS)) {
      if (f.compatible) expect(f.compatible, name).toContain(name);
      for (const c of f.compatible ?? []) expect(Object.keys(FLAVOURS), `${name} compatible ${c}`).toContain(c);
    }
    expect(FLAVOURS.openai.compatible).toEqual(["openai", "azure"]);
    expect(FLAVOURS.azure.compatible).toEqual(["azure", "openai"]);
    // Claude on Bedrock's InvokeModel and Vertex's rawPredict: members of an Anthropic pool through their rows' wires (issue 41).
    expect(FLAVOURS.anthropic.compatible).toEqual(["anthropic", "bedrock", "vertex"]);
    for (const c of FLAVOURS.anthropic.compatible!) if (c !== "anthropic") expect(FLAVOURS[c as FlavourName].wires?.anthropic, c).toBeDefined();
  });

  it("every built-in provider names a flavour, and its gen_ai name only where the conventions give one", () => {
    for (const [name, p] of Object.entries(BUILT_IN)) expect(Object.keys(FLAVOURS), name).toContain(p.flavour);
    for (const name of Object.keys(GENAI_NAMES)) expect(Object.keys(BUILT_IN)).toContain(name);
    // Each built-in speaks the dialect of its own name.
    for (const [name, p] of Object.entries(BUILT_IN)) expect(p.dialect).toBe(name);
    expect(BUILT_IN.anthropic!.flavour).toBe("anthropic");
    expect(BUILT_IN.groq!.flavour).toBe("openai");
  });

  it("send a member's credential as each family's API documents it", () => {
    const sent = (f: FlavourName) => credentialHeadersOf(FLAVOURS[f].send, "s3cret");
    expect(sent("openai")).toEqual({ authorization: "Bearer s3cret" });
    expect(sent("anthropic")).toEqual({ "x-api-key": "s3cret" });
    expect(sent("gemini")).toEqual({ "x-goog-api-key": "s3cret" });
    expect(sent("azure")).toEqual({ "api-key": "s3cret" });
    expect(FLAVOURS.anthropic.fixed).toEqual({ "anthropic-version": "2023-06-01" });
  });

  it("a query credential goes in the query; a headers-only client is told, never sent without it", () => {
    expect(placeCredential({ kind: "query", param: "key" }, "s")).toEqual({ headers: [], query: [["key", "s"]] });
    expect(() => credentialHeadersOf({ kind: "query", param: "key" }, "s")).toThrow(/query/);
  });
});

describe("header families over the rows", () => {
  it("gather each family's spellings once", () => {
    expect(QUOTA_HEADERS).toEqual(["x-ratelimit-", "anthropic-ratelimit-"]);
    expect(ACCOUNT_HEADERS).toEqual(["openai-organization", "openai-project", "anthropic-organization-id"]);
    expect(MEMBER_HEADERS).toEqual(["x-ms-", "azureml-", "apim-request-id", "x-amzn-requestid", "x-amz-apigw-id", "x-amzn-trace-id"]);
    expect(new Set(CREDENTIAL_HEADERS)).toEqual(new Set(["authorization", "x-api-key", "api-key", "x-goog-api-key"]));
    expect(new Set(CREDENTIAL_AND_SCOPE_HEADERS)).toEqual(new Set([...CREDENTIAL_HEADERS, "openai-organization", "openai-project", "x-goog-user-project"]));
    expect(CREDENTIAL_PARAMS).toEqual(["key"]);
    expect(new Set(STREAM_ENDS)).toEqual(new Set(["data: [DONE]", "event: message_stop", '"type":"message_stop"', "response.completed", '"finishReason"']));
  });

  it("semantic headers in the order the cache key has always had them (a stored entry stays found)", () => {
    expect(SEMANTIC_HEADERS).toEqual(["anthropic-beta", "anthropic-version", "openai-beta", "x-goog-fieldmask"]);
  });

  it("a spelling ending in - is a prefix, any other a whole name", () => {
    expect(spelled("x-ratelimit-remaining-requests", ["x-ratelimit-"])).toBe(true);
    expect(spelled("x-ratelimitbysize-limit-minute", ["x-ratelimit-"])).toBe(false);
    expect(spelled("apim-request-id", ["apim-request-id"])).toBe(true);
    expect(spelled("apim-request-id-2", ["apim-request-id"])).toBe(false);
  });

  it("a pooled answer loses what tells its members apart, and keeps what a caller needs", () => {
    const h = new Headers({
      "x-ratelimit-remaining-requests": "1", "anthropic-ratelimit-tokens-limit": "9", "x-slotgate-provider-x-ratelimit-limit-requests": "5",
      ratelimit: '"d";r=1;t=2', "ratelimit-policy": '"d";q=3;w=60', "openai-organization": "org-a", "anthropic-organization-id": "o",
      "x-ms-region": "eastus", "azureml-model-session": "s", "apim-request-id": "r", "set-cookie": "a=b",
      "retry-after": "3", "content-type": "application/json", "x-request-id": "req", "x-slotgate-limit": "10",
    });
    hideMember(h);
    expect([...h.keys()].sort()).toEqual(["content-type", "retry-after", "x-request-id", "x-slotgate-limit"]);
  });
});

describe("a pool member's address (the member column)", () => {
  const azure = FLAVOURS.azure.member!;
  const refusal = (m: Record<string, unknown>, ownBase = false) => {
    try {
      readAddress("POOLS.p.members[0]", m, azure, ownBase);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error("accepted");
  };

  it("checks Azure's fields in order, each named with what it must be", () => {
    expect(refusal({ deployments: {}, apiVersion: "?" })).toBe("POOLS.p.members[0].resource must be the Azure resource's name");
    expect(refusal({ resource: "r", deployments: {}, apiVersion: "?" })).toBe("POOLS.p.members[0].deployments must map model names to deployment names");
    expect(refusal({ resource: "r", deployments: { m: "a/b" } })).toBe("POOLS.p.members[0].deployments.m must be a deployment name");
    expect(refusal({ resource: "r", deployments: { m: "d" }, apiVersion: "bad version" })).toBe("POOLS.p.members[0].apiVersion must be an api-version");
  });

  it("reads a resource lowercased, the api-version's default, and needs no resource beside a baseUrl of the member's own", () => {
    const a = readAddress("at", { resource: "MyRes", deployments: { "gpt-4o": "dep" } }, azure, false);
    expect(a).toEqual({ fields: { resource: "myres", apiVersion: "2024-10-21" }, models: { "gpt-4o": "dep" }, resource: "myres" });
    expect(baseWith("https://{resource}.openai.azure.com", a)).toBe("https://myres.openai.azure.com");
    expect(readAddress("at", { deployments: { m: "d" } }, azure, true)).toEqual({ fields: { apiVersion: "2024-10-21" }, models: { m: "d" } });
  });

  it("sends a request to the deployment of the body's model, with its api-version; none for a model it has no deployment of", () => {
    const a = readAddress("at", { resource: "r", deployments: { "gpt-4o": "dep-1" }, apiVersion: "2025-01-01" }, azure, false);
    expect(addressOf(azure, a, "/v1/chat/completions", { model: "gpt-4o" })).toEqual({ path: "/openai/deployments/dep-1/chat/completions", query: [["api-version", "2025-01-01"]] });
    expect(addressOf(azure, a, "/embeddings", { model: "gpt-4o" })?.path).toBe("/openai/deployments/dep-1/embeddings");
    expect(addressOf(azure, a, "/v1/chat/completions", { model: "gpt-4.1" })).toBeNull();
    expect(addressOf(azure, a, "/v1/chat/completions", null)).toBeNull();
  });

  it("takes other shapes as data: a field in the host and the path, the caller's path's groups, no model map", () => {
    // A shape like the next providers' (a region in the host, the model in the caller's path): no code for it.
    const shape: MemberShape = {
      fields: { region: { kind: "text", check: /^[a-z]{2}-[a-z]+-\d$/i, says: "a region", resource: true }, project: { kind: "text", check: /^[a-z-]+$/, says: "a project" } },
      path: { from: /^\/model\/(?<model>[^/]+)\/(?<op>invoke|converse)$/, to: "/p/{project}/{region}/model/{model}/{op}" },
      query: {},
    };
    const a = readAddress("at", { region: "US-East-1", project: "acme" }, shape, false);
    expect(baseWith("https://runtime.{region}.example.com", a)).toBe("https://runtime.us-east-1.example.com");
    expect(addressOf(shape, a, "/model/m.v1:0/converse", null)).toEqual({ path: "/p/acme/us-east-1/model/m.v1:0/converse", query: [] });
    expect(addressOf(shape, a, "/model/m/other", null)).toBeNull();
  });
});

describe("batch routes (the batches column)", () => {
  it("reads each tracked family's operations, and none of an untracked one", () => {
    expect(opOf("openai", "POST", "/v1/batches")).toEqual({ k: "create" });
    expect(opOf("openai", "GET", "/files/file-1/content")).toEqual({ k: "content", id: "file-1" });
    expect(opOf("anthropic", "GET", "/v1/messages/batches/msgbatch_1/results")).toEqual({ k: "results", id: "msgbatch_1" });
    expect(opOf("anthropic", "GET", "/messages/batches")).toBeNull();
    expect(opOf("gemini", "GET", "/v1beta/batches")).toBeNull();
    expect(opOf("azure", "POST", "/r/openai/batches")).toBeNull();
  });

  it("says which families it keeps to their owners, as a refusal names them", () => {
    expect(TRACKED).toEqual({ batches: "OpenAI and Anthropic", files: "OpenAI's /v1/files" });
  });

  it("fills a read path, and has none when what it names is missing", () => {
    expect(readPath(batchRoutes("openai")!.read.results, { id: "b", output: "file 1" })).toBe("/v1/files/file%201/content");
    expect(readPath(batchRoutes("openai")!.read.results, { id: "b", output: null })).toBeNull();
    expect(readPath(batchRoutes("anthropic")!.read.results, { id: "msgbatch_1", output: null })).toBe("/v1/messages/batches/msgbatch_1/results");
    expect(batchRoutes("anthropic")!.resultsUrl).toBe(true);
    expect(batchRoutes("openai")!.input).toBe("file");
  });
});
