// What a request body names of the account's stored objects, by id: a response to continue, a
// file to read, a vector store to search, a cached context. A virtual key's holder may reach only
// those it made (src/stored/stage.ts). Pure: the providers' published shapes, as a table of the
// fields that carry an id, read wherever they are nested.
import { FLAVOURS } from "../providers/table";

/** What kind of stored object an id names. `file` and `response` the gateway can tell the owner of; the others only `all` reaches. */
export type RefKind = "file" | "response" | "item" | "vector_store" | "conversation" | "prompt" | "container" | "cached_content";

export interface Ref {
  kind: RefKind;
  id: string;
}

/**
 * Fields that name a stored object, wherever they appear in a body: OpenAI's `file_id` (a chat
 * message's file part, a Responses `input_file` or `input_image`, Anthropic's `file` source and
 * `container_upload`), `file_ids` (a code interpreter's), `previous_response_id`,
 * `vector_store_ids` (`file_search`); Gemini's `fileData.fileUri` of an uploaded file.
 * A field whose value is not a string (or array of them) is a schema or a message, not an id.
 */
const FIELDS: Record<string, RefKind> = {
  file_id: "file",
  file_ids: "file",
  previous_response_id: "response",
  vector_store_ids: "vector_store",
  fileUri: "file",
  file_uri: "file",
};

/** Top-level fields only: they are ids there, and may be words elsewhere. */
const TOP: Record<string, RefKind> = {
  conversation: "conversation",
  prompt: "prompt",
  container: "container",
  cachedContent: "cached_content",
  cached_content: "cached_content",
};

/**
 * An uploaded file as the families that name files by URI write it (their rows' `fileUri`: Gemini's
 * `files/<id>` or its URL on the API's host); any other URI (a web page, gs://, YouTube) is no stored object.
 */
const FILE_URIS = Object.values(FLAVOURS).flatMap((f) => (f.fileUri ? [f.fileUri] : []));
const isFileUri = (x: unknown) => typeof x === "string" && FILE_URIS.some((re) => re.test(x));

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every stored object `body` names (its parsed JSON), at most `max` of them (the rest would be refused with them anyway). */
export function refsIn(body: unknown, max = 64): Ref[] {
  const out: Ref[] = [];
  const add = (kind: RefKind, v: unknown) => {
    for (const id of Array.isArray(v) ? v : [v]) if (typeof id === "string" && id !== "" && out.length < max) out.push({ kind, id });
  };
  if (isObj(body))
    for (const [k, kind] of Object.entries(TOP)) {
      const v = body[k];
      // A completion's `prompt` is its text: only Responses' `{"id": ...}` names a stored prompt.
      add(kind, isObj(v) ? v.id : kind === "prompt" ? null : v);
    }
  const walk = (v: unknown, depth: number) => {
    if (depth > 32 || out.length >= max) return;
    if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (isObj(v)) {
      // A Responses item_reference names an item of a stored response; a code interpreter may name a container to reuse.
      if (v.type === "item_reference") add("item", v.id);
      if (v.type === "code_interpreter" && typeof v.container === "string") add("container", v.container);
      for (const [k, x] of Object.entries(v)) {
        const kind = Object.hasOwn(FIELDS, k) ? FIELDS[k] : undefined;
        if (kind && (k === "fileUri" || k === "file_uri") && !isFileUri(x)) continue;
        if (kind && (typeof x === "string" || Array.isArray(x))) add(kind, x);
        else walk(x, depth + 1);
      }
    }
  };
  walk(body, 0);
  return out;
}
