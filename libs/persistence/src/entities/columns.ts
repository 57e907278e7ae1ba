/** jsonb columns come back as parsed objects from pg; keep `null` distinct from `{}`. */
export const jsonb = { type: 'jsonb' as const };
export const tstz = { type: 'timestamptz' as const };

