// OpenAI's Files API (/v1/files): an account's files, one store per credential. Every account
// already holds one file (answers.jsonl, `file-eval-answers`): what a gateway must keep a virtual
// key that did not make it away from.
import type { Call } from "./batch-api.ts";
import { page, unixSeconds } from "./batch-run.ts";
import { base62 } from "./reply.ts";

export interface FileObject {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  expires_at: number | null;
  filename: string;
  purpose: string;
  status: "processed";
  status_details: null;
}

export interface StoredFile {
  object: FileObject;
  content: Buffer;
}

const PURPOSES = ["assistants", "batch", "fine-tune", "vision", "user_data", "evals"];

export const fileId = () => `file-${base62(22)}`;

export function newFile(filename: string, purpose: string, content: Buffer, now: number): StoredFile {
  const object: FileObject = {
    id: fileId(), object: "file", bytes: content.length, created_at: unixSeconds(now)!, expires_at: null,
    filename, purpose, status: "processed", status_details: null,
  };
  return { object, content };
}

const SEEDED = (): StoredFile => ({
  object: { id: "file-eval-answers", object: "file", bytes: 2_048, created_at: 1_764_000_000, expires_at: null, filename: "answers.jsonl", purpose: "batch_output", status: "processed", status_details: null },
  content: Buffer.from(`${JSON.stringify({ custom_id: "someone-elses", response: { status_code: 200, body: { answer: "private" } }, error: null })}\n`),
});

/** The account's files, oldest first (the seeded one first). */
export function filesOf(call: Pick<Call, "state" | "credential">): Map<string, StoredFile> {
  let files = call.state.files.get(call.credential);
  if (!files) {
    const seeded = SEEDED();
    files = new Map([[seeded.object.id, seeded]]);
    call.state.files.set(call.credential, files);
  }
  return files;
}

const invalid = (message: string, param: string | null = null, code: string | null = null) => ({ error: { message, type: "invalid_request_error", param, code } });
export const noFile = (call: Call, id: string) => call.json(404, invalid(`No such File object: ${id}`, "id"));

/** POST /v1/files (multipart: `file`, `purpose`). */
export async function upload(call: Call): Promise<void> {
  let form: FormData;
  try {
    form = await new Request("http://standin.invalid/", { method: "POST", headers: { "content-type": String(call.headers["content-type"] ?? "") }, body: call.body }).formData();
  } catch {
    return call.json(400, invalid("Could not parse multipart form"));
  }
  const purpose = form.get("purpose");
  const file = form.get("file");
  if (typeof purpose !== "string" || !PURPOSES.includes(purpose)) return call.json(400, invalid(`'purpose' must be one of ${PURPOSES.join(", ")}`, "purpose"));
  if (!(file instanceof Blob)) return call.json(400, invalid("Missing required parameter: 'file'.", "file", "missing_required_parameter"));
  const content = Buffer.from(await file.arrayBuffer());
  if (purpose === "batch" && content.length > call.state.options.batchMaxBytes)
    return call.json(400, invalid(`File is too large: ${content.length} bytes, the limit for batch files is ${call.state.options.batchMaxBytes}.`, "file"));
  const stored = newFile("name" in file && typeof file.name === "string" ? file.name : "upload.jsonl", purpose, content, call.now);
  filesOf(call).set(stored.object.id, stored);
  call.state.stats.batchEvent("uploads");
  call.json(200, stored.object);
}

/** GET /v1/files (?purpose=, limit=, after=, order=asc|desc). */
export function listFiles(call: Call): void {
  const purpose = call.query.get("purpose");
  let all = [...filesOf(call).values()].map((f) => f.object).filter((f) => !purpose || f.purpose === purpose);
  if (call.query.get("order") !== "asc") all = all.reverse();
  const { data, hasMore } = page(all, call.query.get("after"), Number(call.query.get("limit") ?? 10_000));
  call.json(200, { object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore });
}

export function getFile(call: Call, id: string): void {
  const f = filesOf(call).get(id);
  if (!f) return noFile(call, id);
  call.json(200, f.object);
}

export function deleteFile(call: Call, id: string): void {
  if (!filesOf(call).delete(id)) return noFile(call, id);
  call.json(200, { id, object: "file", deleted: true });
}

/** GET /v1/files/{id}/content: the bytes as stored. */
export function contentOf(call: Call, id: string): void {
  const f = filesOf(call).get(id);
  if (!f) return noFile(call, id);
  call.bytes(200, f.content, "application/octet-stream");
}
