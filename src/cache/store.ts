import { type EntryMeta, fromCustomMetadata, toCustomMetadata } from "./entry";

/** Where an entry's bytes live in R2: under its namespace, so a namespace is purged by prefix. */
export const objectKey = (namespace: string, key: string) => `v1/${encodeURIComponent(namespace)}/${key}`;
export const namespacePrefix = (namespace: string | null) => (namespace === null ? "v1/" : `v1/${encodeURIComponent(namespace)}/`);

export interface Stored {
  meta: EntryMeta;
  body: ReadableStream<Uint8Array>;
  size: number;
}

/** The bodies: R2, strongly consistent and global. Expiry is in the metadata and checked by the reader. */
export class CacheStore {
  constructor(private readonly bucket: R2Bucket) {}

  async get(namespace: string, key: string): Promise<Stored | null> {
    const obj = await this.bucket.get(objectKey(namespace, key));
    if (!obj) return null;
    const meta = fromCustomMetadata(obj.customMetadata);
    if (!meta) {
      await obj.body.cancel().catch(() => {});
      return null;
    }
    return { meta, body: obj.body, size: obj.size };
  }

  async put(namespace: string, key: string, body: Uint8Array, meta: EntryMeta): Promise<void> {
    await this.bucket.put(objectKey(namespace, key), body, { customMetadata: toCustomMetadata(meta) });
  }

  /** Deletes every object under a namespace (all of them with null); returns how many. */
  async purge(namespace: string | null): Promise<number> {
    const prefix = namespacePrefix(namespace);
    let deleted = 0;
    let cursor: string | undefined;
    do {
      const page = await this.bucket.list({ prefix, cursor, limit: 1000 });
      const keys = page.objects.map((o) => o.key);
      if (keys.length) await this.bucket.delete(keys);
      deleted += keys.length;
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    return deleted;
  }

  async delete(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) await this.bucket.delete(keys.slice(i, i + 1000));
  }
}
