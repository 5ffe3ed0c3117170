/** Sets `key` in an isolate's map, dropping the oldest entry first when it holds `max`: memory stays bounded whatever callers send. */
export function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
