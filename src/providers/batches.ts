/**
 * @module The flavour rows' `batches` column: the batch APIs whose batches the gateway keeps to
 * the virtual key that made them, and meters as their results are read (src/batches/). Azure's
 * (behind `/openai`) and Gemini's are not tracked: the scopes leave them to a key that sees the
 * whole account.
 */
import type { BatchRoutes } from "./flavour";

/**
 * OpenAI's Batch API (platform.openai.com/docs/api-reference/batch, /files): the input is a JSONL
 * file uploaded with purpose `batch`, the batch names it by `input_file_id`, and its results are
 * in an output file (and an error file). `/v1` is optional, as in the endpoint table.
 */
export const FILE_BATCHES: BatchRoutes = {
  ops:
    "POST /files upload;GET /files files;GET /files/{id} file;GET /files/{id}/content content;DELETE /files/{id} unfile;" +
    "POST /batches create;GET /batches list;GET /batches/{id} batch;POST /batches/{id}/cancel cancel",
  prefix: "(?:/v1)?",
  input: "file",
  read: { batch: "/v1/batches/{id}", results: "/v1/files/{output}/content" },
  listHead: '"object":"list",',
  files: "/v1/files",
};

/**
 * Anthropic's Message Batches (docs.anthropic.com/en/api/creating-message-batches and the pages
 * beside it): the requests inline in the create's `requests[].params`, results as JSONL at
 * `/v1/messages/batches/<id>/results`, which the batch object's `results_url` names on
 * Anthropic's own host. Its list carries no `object` field.
 */
export const INLINE_BATCHES: BatchRoutes = {
  ops:
    "POST /messages/batches create;GET /messages/batches list;GET /messages/batches/{id} batch;" +
    "GET /messages/batches/{id}/results results;POST /messages/batches/{id}/cancel cancel;DELETE /messages/batches/{id} unbatch",
  prefix: "/v1",
  input: "inline",
  read: { batch: "/v1/messages/batches/{id}", results: "/v1/messages/batches/{id}/results" },
  resultsUrl: true,
  listHead: "",
};
