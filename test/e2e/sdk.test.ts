// The official openai and @anthropic-ai/sdk clients, unchanged but for baseURL and apiKey, through
// `wrangler dev` to the stand-in: answers parse, streams arrive as they are written (not buffered
// until the provider is done), and every answer carries the x-slotgate-* headers.
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  ANTHROPIC_MODEL, OPENAI_MODEL, anthropicVia, attemptsOf, credential, openaiVia, prompt, stamped, useStack,
} from "./setup.ts";

/** The stand-in takes this long per answer; a stream spreads it over its chunks (7 gaps for 6 deltas). */
const LATENCY_MS = 1_400;
const stack = useStack({ standin: { echo: true, latencyMs: LATENCY_MS, streamChunks: 6 } });

type Provider = "openai" | "anthropic";
const MODEL: Record<Provider, string> = { openai: OPENAI_MODEL, anthropic: ANTHROPIC_MODEL };

/** One upstream attempt, made with the caller's own credential and body, and the headers say so. */
function expectOneCleanAttempt(response: Response, provider: Provider, apiKey: string, stream: boolean): void {
  const { key, attempts } = stamped(response, provider, MODEL[provider]);
  expect(attempts).toBe(1);
  expect(key).not.toContain(apiKey.slice(3)); // hashed, never echoed
  const seen = attemptsOf(stack.standin.stats(), apiKey);
  expect(seen.map((a) => [a.provider, a.model, a.stream, a.status])).toEqual([[provider, MODEL[provider], stream, 200]]);
}

const oaChat = { model: OPENAI_MODEL };
const anMessages = { model: ANTHROPIC_MODEL, max_tokens: 64 };
const user = (text: string) => [{ role: "user" as const, content: text }];

interface Answer {
  text: string;
  response: Response;
}

const plain: { name: string; provider: Provider; ask: (apiKey: string, text: string) => Promise<Answer> }[] = [
  {
    name: "openai chat.completions.create",
    provider: "openai",
    ask: async (apiKey, text) => {
      const { data, response } = await openaiVia(stack, apiKey).chat.completions.create({ ...oaChat, messages: user(text) }).withResponse();
      expect(data.object).toBe("chat.completion");
      expect(data.choices[0]?.finish_reason).toBe("stop");
      return { text: data.choices[0]?.message.content ?? "", response };
    },
  },
  {
    name: "openai responses.create",
    provider: "openai",
    ask: async (apiKey, text) => {
      const { data, response } = await openaiVia(stack, apiKey).responses.create({ model: OPENAI_MODEL, input: text }).withResponse();
      expect(data.status).toBe("completed");
      return { text: data.output_text, response };
    },
  },
  {
    name: "anthropic messages.create",
    provider: "anthropic",
    ask: async (apiKey, text) => {
      const { data, response } = await anthropicVia(stack, apiKey).messages.create({ ...anMessages, messages: user(text) }).withResponse();
      expect(data.stop_reason).toBe("end_turn");
      const block = data.content[0];
      return { text: block?.type === "text" ? block.text : "", response };
    },
  },
];

// Independent keys and credentials: these three may run at once.
describe.concurrent("non-streaming: the SDKs parse the answer", () => {
  it.each(plain)("$name", async ({ name, provider, ask }) => {
    const apiKey = credential(provider);
    const { text, response } = await ask(apiKey, prompt(name));
    expect(text).toBe(prompt(name)); // the stand-in echoes the prompt: the body went through intact
    expectOneCleanAttempt(response, provider, apiKey, false);
  });
});

interface Opened {
  response: Response;
  /** The text each event carries ("" for events without text), in arrival order. */
  pieces: AsyncIterable<string>;
  /** What the SDK's own accumulator made of the stream, where it has one. */
  final?: () => Promise<string>;
}

async function* texts<E>(events: AsyncIterable<E>, pick: (e: E) => string | undefined): AsyncIterable<string> {
  for await (const e of events) yield pick(e) ?? "";
}

const chatDelta = (e: OpenAI.Chat.Completions.ChatCompletionChunk) => e.choices[0]?.delta.content ?? undefined;
const responsesDelta = (e: OpenAI.Responses.ResponseStreamEvent) => (e.type === "response.output_text.delta" ? e.delta : undefined);
const messagesDelta = (e: Anthropic.Messages.RawMessageStreamEvent) =>
  e.type === "content_block_delta" && e.delta.type === "text_delta" ? e.delta.text : undefined;

const streams: { name: string; provider: Provider; open: (apiKey: string, text: string) => Promise<Opened> }[] = [
  {
    name: "openai chat.completions.create({stream: true})",
    provider: "openai",
    open: async (apiKey, text) => {
      const { data, response } = await openaiVia(stack, apiKey).chat.completions
        .create({ ...oaChat, messages: user(text), stream: true, stream_options: { include_usage: true } })
        .withResponse();
      return { response, pieces: texts(data, chatDelta) };
    },
  },
  {
    name: "openai responses.create({stream: true})",
    provider: "openai",
    open: async (apiKey, text) => {
      const { data, response } = await openaiVia(stack, apiKey).responses.create({ model: OPENAI_MODEL, input: text, stream: true }).withResponse();
      let done = "";
      const pick = (e: OpenAI.Responses.ResponseStreamEvent) => {
        if (e.type === "response.completed") done = e.response.output.flatMap((o) => (o.type === "message" ? o.content : [])).map((c) => (c.type === "output_text" ? c.text : "")).join("");
        return responsesDelta(e);
      };
      return { response, pieces: texts(data, pick), final: async () => done };
    },
  },
  {
    name: "anthropic messages.create({stream: true})",
    provider: "anthropic",
    open: async (apiKey, text) => {
      const { data, response } = await anthropicVia(stack, apiKey).messages.create({ ...anMessages, messages: user(text), stream: true }).withResponse();
      return { response, pieces: texts(data, messagesDelta) };
    },
  },
  {
    name: "anthropic messages.stream (MessageStream)",
    provider: "anthropic",
    open: async (apiKey, text) => {
      const stream = anthropicVia(stack, apiKey).messages.stream({ ...anMessages, messages: user(text) });
      const { response } = await stream.withResponse();
      return { response, pieces: texts(stream, messagesDelta), final: () => stream.finalText() };
    },
  },
];

describe("streaming: chunks reach the client while the provider is still writing", () => {
  it.each(streams)("$name", async ({ name, provider, open }) => {
    const apiKey = credential(provider);
    const completedBefore = stack.standin.stats().completed;
    const t0 = performance.now();
    const { response, pieces, final } = await open(apiKey, prompt(name));
    let firstAt = 0;
    let standinDoneAtFirst = true;
    const received: string[] = [];
    for await (const piece of pieces) {
      if (!firstAt) {
        firstAt = performance.now() - t0;
        standinDoneAtFirst = stack.standin.stats().completed > completedBefore;
      }
      if (piece) received.push(piece);
    }
    const totalMs = performance.now() - t0;
    console.info(`[sdk] ${name}: first chunk after ${Math.round(firstAt)} ms, stream done after ${Math.round(totalMs)} ms`);

    expect(received.join("")).toBe(prompt(name));
    expect(received.length).toBe(6); // six deltas, not one lump
    if (final) expect(await final()).toBe(prompt(name));
    expect(standinDoneAtFirst, "the stand-in had already finished writing when the first chunk arrived").toBe(false);
    expect(totalMs).toBeGreaterThanOrEqual(LATENCY_MS * 0.9);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expectOneCleanAttempt(response, provider, apiKey, true);
  });
});
