/**
 * `--param key=value` for a benchmark: whole numbers only, unknown keys refused by name, so a typo
 * never runs a benchmark with defaults the user did not mean.
 */
export function intParams<K extends string>(
  benchmark: string,
  given: Record<string, string>,
  defaults: Record<K, number>,
  limits: Partial<Record<K, { min: number; max: number }>> = {},
): Record<K, number> {
  const out = { ...defaults };
  for (const [key, raw] of Object.entries(given)) {
    if (!(key in defaults)) {
      throw new Error(`${benchmark}: unknown parameter '${key}' (known: ${Object.keys(defaults).join(', ')})`);
    }
    if (!/^\d+$/.test(raw)) throw new Error(`${benchmark}: parameter ${key} must be a whole number, got '${raw}'`);
    const value = Number(raw);
    const limit = limits[key as K] ?? { min: 1, max: 1_000_000 };
    if (value < limit.min || value > limit.max) {
      throw new Error(`${benchmark}: parameter ${key} must be between ${limit.min} and ${limit.max}, got ${value}`);
    }
    out[key as K] = value;
  }
  return out;
}
