// The representative chat completion the workerd benches (hotpath, runtime) time: its body, the
// provider's answer and that answer's headers.
export const BODY = JSON.stringify({
  model: "gpt-4o-mini",
  max_tokens: 64,
  messages: [
    { role: "system", content: "You are a careful grader. Answer with one word." },
    { role: "user", content: "Question 17 of the eval set: is the following statement true? ".repeat(6) },
  ],
});
export const BYTES = new TextEncoder().encode(BODY);
export const UPSTREAM = {
  "content-type": "application/json",
  "x-request-id": "req_0123456789abcdef",
  "openai-processing-ms": "312",
  "x-ratelimit-limit-requests": "500000",
  "x-ratelimit-remaining-requests": "499999",
  "x-ratelimit-reset-requests": "1ms",
  "x-ratelimit-limit-tokens": "200000000",
  "x-ratelimit-remaining-tokens": "199999000",
  "x-ratelimit-reset-tokens": "1ms",
};
export const ANSWER = JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "True" }, finish_reason: "stop" }], usage: { prompt_tokens: 120, completion_tokens: 1, total_tokens: 121 } });
