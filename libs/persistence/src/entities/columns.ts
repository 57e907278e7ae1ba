import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

/** jsonb columns come back as parsed objects from pg; keep `null` distinct from `{}`. */
export const jsonb = { type: 'jsonb' as const };
export const tstz = { type: 'timestamptz' as const };

/**
 * A jsonb object column. `any` rather than `unknown` values: what goes in is validated where it
 * enters (DTOs, policy schemas), and readers narrow what they take out.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonObject = Record<string, any>;

/**
 * An update or insert payload for `repository.update/insert`. TypeORM 1.x types jsonb members of
 * such payloads recursively and rejects plain objects with `any` members (e.g. `{placement:
 * {zone: 'az1'}}`); the entity's own column types are what is checked, this only bridges the two.
 */
export const row = <T>(value: Partial<T>): QueryDeepPartialEntity<T> => value as unknown as QueryDeepPartialEntity<T>;
