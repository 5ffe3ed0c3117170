// A provider's files and batches in memory, per credential (an account), for the workers tests:
// OpenAI's /v1/files and /v1/batches and Anthropic's /v1/messages/batches, answered at once. A
// batch is completed when it is first looked at after creation, every line answered with `usage`
// but the last `fail`, which expire (OpenAI's error file). A file's content answers a `Range`
// with 206 and that part, as OpenAI's file storage does.
import { json, mockUpstream } from "./upstream";

export const LINE_USAGE = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 };
export const CLAUDE_USAGE = { input_tokens: 12, output_tokens: 6, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };

interface Account {
  files: Map<string, { obj: Record<string, unknown>; text: string }>;
  batches: Map<string, Record<string, unknown>>;
}

export function batchUpstream({ fail = 0 } = {}) {
  const accounts = new Map<string, Account>();
  let n = 0;
  const accountOf = (req: Request) => {
    const who = req.headers.get("authorization")?.replace(/^Bearer /, "") ?? req.headers.get("x-api-key") ?? "";
    let a = accounts.get(who);
    if (!a) accounts.set(who, (a = { files: new Map(), batches: new Map() }));
    return { who, a };
  };
  const mock = mockUpstream(async (req) => {
    const { a } = accountOf(req);
    const path = new URL(req.url).pathname;
    const m = (re: RegExp) => re.exec(path);
    if (req.method === "POST" && path === "/v1/files") {
      const form = await req.formData();
      const file = form.get("file") as File;
      const obj = { id: `file-${++n}`, object: "file", bytes: file.size, created_at: 1, filename: file.name, purpose: form.get("purpose") };
      a.files.set(obj.id, { obj, text: await file.text() });
      return json(obj);
    }
    if (req.method === "GET" && path === "/v1/files") return json({ object: "list", data: [...a.files.values()].map((f) => f.obj), has_more: false });
    let hit = m(/^\/v1\/files\/([^/]+)\/content$/);
    if (hit) {
      const f = a.files.get(hit[1]!);
      if (!f) return json({ error: { message: "No such File" } }, 404);
      const bytes = new TextEncoder().encode(f.text);
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.get("range") ?? "");
      if (!range) return new Response(bytes, { headers: { "content-type": "application/octet-stream" } });
      const from = Number(range[1]);
      const to = range[2] ? Number(range[2]) : bytes.length - 1;
      return new Response(bytes.slice(from, to + 1), { status: 206, headers: { "content-type": "application/octet-stream", "content-range": `bytes ${from}-${to}/${bytes.length}` } });
    }
    if (req.method === "POST" && path === "/v1/batches") {
      const body = (await req.json()) as { input_file_id: string };
      if (!a.files.has(body.input_file_id)) return json({ error: { message: `No such File object: ${body.input_file_id}` } }, 404);
      const b = { id: `batch_${++n}`, object: "batch", status: "validating", input_file_id: body.input_file_id, output_file_id: null, error_file_id: null, created_at: 1, request_counts: { total: 0, completed: 0, failed: 0 }, metadata: null };
      a.batches.set(b.id, b);
      return json(b);
    }
    hit = m(/^\/v1\/batches\/([^/]+)(\/cancel)?$/);
    if (hit) {
      const b = a.batches.get(hit[1]!);
      if (!b) return json({ error: { message: "No batch found" } }, 404);
      if (hit[2]) return json({ ...b, status: "cancelling" });
      if (b.status === "validating") complete(a, b, () => `file-out-${++n}`, fail);
      return json(b);
    }
    if (req.method === "GET" && path === "/v1/batches") return json({ object: "list", data: [...a.batches.values()], has_more: false });
    if (req.method === "POST" && path === "/v1/messages/batches") {
      const body = (await req.json()) as { requests: { custom_id: string; params: { model: string } }[] };
      const results = body.requests.map((r) => JSON.stringify({ custom_id: r.custom_id, result: { type: "succeeded", message: { type: "message", model: r.params.model, usage: CLAUDE_USAGE } } }));
      const b = { id: `msgbatch_${++n}`, type: "message_batch", processing_status: "ended", request_counts: { processing: 0, succeeded: results.length }, created_at: "2026-01-01T00:00:00Z", results_url: "https://api.anthropic.com/v1/messages/batches/x/results" };
      a.batches.set(b.id, { ...b, results });
      return json(b);
    }
    hit = m(/^\/v1\/messages\/batches\/([^/]+)(\/results)?$/);
    if (hit) {
      const b = a.batches.get(hit[1]!);
      if (!b) return json({ type: "error", error: { type: "not_found_error", message: "not found" } }, 404);
      const { results, ...obj } = b as { results: string[] };
      return hit[2] ? new Response(`${results.join("\n")}\n`, { headers: { "content-type": "application/x-jsonl" } }) : json(obj);
    }
    return json({ error: { message: `Invalid URL (${req.method} ${path})` } }, 404);
  });
  return { ...mock, accounts };
}

/** The batch's lines answered: an output file of them, each with LINE_USAGE and the file's model; the last `fail` expired, in an error file. */
function complete(a: Account, b: Record<string, unknown>, id: () => string, fail: number): void {
  const input = a.files.get(String(b.input_file_id))!.text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as { custom_id: string; body: { model: string } });
  const done = input.slice(0, input.length - fail);
  const lines = done.map((l) => JSON.stringify({ id: `batch_req_${l.custom_id}`, custom_id: l.custom_id, response: { status_code: 200, request_id: "req_1", body: { object: "chat.completion", model: l.body.model, usage: LINE_USAGE } }, error: null }));
  const out = id();
  a.files.set(out, { obj: { id: out, object: "file", purpose: "batch_output" }, text: `${lines.join("\n")}\n` });
  Object.assign(b, { status: "completed", output_file_id: out, request_counts: { total: input.length, completed: done.length, failed: fail } });
  if (!fail) return;
  const errors = input.slice(done.length).map((l) => JSON.stringify({ id: `batch_req_${l.custom_id}`, custom_id: l.custom_id, response: null, error: { code: "batch_expired", message: "This request could not be executed before the completion window expired." } }));
  const err = id();
  a.files.set(err, { obj: { id: err, object: "file", purpose: "batch_output" }, text: `${errors.join("\n")}\n` });
  b.error_file_id = err;
}

/** A JSONL batch input of `n` chat lines for `model`, as a multipart upload's form. */
export function uploadForm(n: number, purpose = "batch", model = "gpt-4o-mini"): FormData {
  const lines = Array.from({ length: n }, (_, i) => JSON.stringify({ custom_id: `r${i}`, method: "POST", url: "/v1/chat/completions", body: { model, max_tokens: 10, messages: [{ role: "user", content: `hello ${i}` }] } }));
  const form = new FormData();
  form.append("purpose", purpose);
  form.append("file", new File([`${lines.join("\n")}\n`], "input.jsonl"));
  return form;
}
