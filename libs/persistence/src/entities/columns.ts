import type { ValueTransformer } from 'typeorm';

/** jsonb columns come back as parsed objects from pg; keep `null` distinct from `{}`. */
export const jsonb = { type: 'jsonb' as const };
export const tstz = { type: 'timestamptz' as const };

/** bigint columns arrive as strings from pg; ids of the outbox fit in a JS number for centuries. */
export const bigintAsNumber: ValueTransformer = {
  to: (v: number | null | undefined) => v,
  from: (v: string | null) => (v === null ? null : Number(v)),
};
