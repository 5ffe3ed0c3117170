import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Gateway, startGateway } from "../support/gateway.ts";
import { type Standin, startStandin } from "../support/standin/index.ts";

let standin: Standin;
let gateway: Gateway;
beforeAll(async () => {
  standin = await startStandin({ rpm: 600, latencyMs: 10 });
  gateway = await startGateway({ providers: { openai: { baseUrl: standin.url } }, verbose: !!process.env.E2E_VERBOSE });
});
afterAll(async () => {
  await gateway?.close();
  await standin?.close();
});

it("the openai SDK gets an answer through wrangler dev", async () => {
  const client = new OpenAI({ apiKey: "sk-e2e", baseURL: `${gateway.url}/openai/v1`, maxRetries: 0 });
  const { data, response } = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }).withResponse();
  expect(data.choices[0]!.message.content).toBeTruthy();
  expect(response.headers.get("x-slotgate-attempts")).toBe("1");
  expect(standin.stats().attempts).toBe(1);
});
