/** Senlin serialised JSON with sorted keys; clients diffing responses rely on stable output. */
export function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return value;
  const sorted: Record<string, unknown> = {};
  for (const k of Object.keys(value as object).sort()) sorted[k] = (value as Record<string, unknown>)[k];
  return sorted;
}

/** A response body as the wire sees it: JSON values only, keys sorted (what `res.json` sends). */
export function toWireJson(value: unknown): unknown {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value, sortKeys) ?? 'null');
}
