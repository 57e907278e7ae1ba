import { badRequest, forbidden, type AuthContext } from '@trellis/common';
import { ClusterActions } from '@trellis/contracts';
import type { ApiRequest } from '../core/request.decorators';
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { intValue, pyList, show, toBool } from './body';

/** What a list endpoint accepts besides limit/marker/sort/global_project. */
export interface ListSpec {
  filters: readonly string[];
  sortKeys: readonly string[];
  /** clusters quote the name of an unknown parameter, every other collection does not */
  quoteUnknown?: boolean;
  /** other accepted parameters (e.g. show_details) */
  extra?: readonly string[];
  /** false for collections without paging (cluster policies) */
  paging?: boolean;
  /** filters that take only these values (Senlin's ListOfEnumField) */
  enums?: Readonly<Record<string, readonly string[]>>;
}

export interface SortKey {
  key: string;
  dir: 'ASC' | 'DESC';
}

export interface ListQuery {
  limit: number | null;
  marker: string | null;
  sort: SortKey[];
  globalProject: boolean;
  /** filter name → the values given (repeated parameters are ORed) */
  filters: Record<string, string[]>;
  extra: Record<string, string>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID.test(s);

function values(v: unknown): string[] {
  if (Array.isArray(v)) return v.map((x) => String(x));
  if (v === undefined || v === null) return [];
  return [String(v)];
}

const last = (v: unknown) => {
  const all = values(v);
  return all[all.length - 1];
};

/** `global_project=true` lists every project's objects: the cloud admin's (rule `cloud_admin`), else 403 as Senlin. */
export function parseListQuery(query: Record<string, unknown>, spec: ListSpec, req: Pick<ApiRequest, 'allows'>): ListQuery {
  const paging = spec.paging !== false;
  const known = new Set<string>([...spec.filters, ...(spec.extra ?? []), 'sort', 'global_project']);
  if (paging) ['limit', 'marker'].forEach((k) => known.add(k));
  for (const key of Object.keys(query)) {
    if (!known.has(key)) throw badRequest(spec.quoteUnknown ? `Invalid parameter '${key}'` : `Invalid parameter ${key}`, 'HTTPBadRequest');
  }
  const out: ListQuery = { limit: null, marker: null, sort: [], globalProject: false, filters: {}, extra: {} };
  if (query.limit !== undefined) {
    out.limit = intValue(last(query.limit), 'limit');
    if (out.limit < 0) throw badRequest(`Value must be >= 0 for field 'limit'.`);
  }
  if (query.marker !== undefined) {
    out.marker = last(query.marker);
    if (!isUuid(out.marker)) throw badRequest(`The value for marker is not a valid UUID: '${out.marker}'.`);
  }
  if (query.sort !== undefined) out.sort = parseSort(last(query.sort), spec.sortKeys);
  if (query.global_project !== undefined) {
    const raw = last(query.global_project);
    try {
      out.globalProject = toBool(raw);
    } catch {
      throw badRequest(`Invalid value '${show(raw)}' specified for 'global_project'`);
    }
    if (out.globalProject && !req.allows('cloud_admin')) throw forbidden();
  }
  for (const f of spec.filters) {
    const vs = values(query[f]);
    const allowed = spec.enums?.[f];
    // Senlin's enum fields name the one value they refuse, as given (the suite sends `['bad-status']`)
    const refused = allowed ? vs.find((v) => !allowed.includes(v)) : undefined;
    if (refused !== undefined) throw badRequest(`Field value ${refused} is invalid`);
    if (vs.length) out.filters[f] = vs;
  }
  for (const e of spec.extra ?? []) {
    if (query[e] !== undefined) out.extra[e] = last(query[e]);
  }
  return out;
}

function parseSort(text: string, allowed: readonly string[]): SortKey[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((item) => {
      const [key, dir = 'asc'] = item.split(':');
      if (!allowed.includes(key)) throw badRequest(`Unsupported sort key '${key}' for 'sort'.`);
      if (dir !== 'asc' && dir !== 'desc') throw badRequest(`Unsupported sort dir '${dir}' for 'sort'.`);
      return { key, dir: dir === 'asc' ? 'ASC' : 'DESC' };
    });
}

/** A boolean filter value (`enabled=true`) with the query-parameter message. */
export function boolFilter(q: ListQuery, name: string): boolean | null {
  const vs = q.filters[name];
  if (!vs) return null;
  const raw = vs[vs.length - 1];
  try {
    return toBool(raw);
  } catch {
    throw badRequest(`Invalid value '${raw}' specified for '${name}'`);
  }
}

/**
 * The most items one list answer holds, with or without `limit`. Senlin had no bound (it loaded and
 * serialised the whole collection); Trellis answers at most this many, as Nova's `max_limit` does:
 * a larger `limit` is lowered to it, and a client pages on with `marker` (docs/ARCHITECTURE.md, Lists).
 */
export const MAX_LIST_LIMIT = 1000;

/** The page size a list query runs with: the caller's `limit`, never above MAX_LIST_LIMIT. */
export const pageSize = (q: Pick<ListQuery, 'limit'>): number => Math.min(q.limit ?? MAX_LIST_LIMIT, MAX_LIST_LIMIT);

/** A sort key as SQL sees it: the column, its direction and whether it may be NULL. */
interface OrderColumn {
  column: string;
  dir: 'ASC' | 'DESC';
  nullable: boolean;
}

/**
 * Runs a list query in SQL: project scope (unless global_project), the caller's sort (then the
 * default, then id, so the order is total), the rows after the marker, and one page.
 *
 * The marker is Senlin's: the id of the last item of the previous page, which must be an item of
 * this (filtered, scoped) collection. The rows after it are found by comparing each sort key with
 * the marker row's own value, read by the database (a JavaScript Date would drop the microseconds),
 * so a page deep in a million rows costs an index range scan, not a read of everything before it.
 */
export async function runList<T extends ObjectLiteral & { id: string }>(
  qb: SelectQueryBuilder<T>,
  q: ListQuery,
  caller: AuthContext,
  defaultSort: SortKey[],
): Promise<T[]> {
  const alias = qb.alias;
  if (!q.globalProject) qb.andWhere(`${alias}.project = :listProject`, { listProject: caller.projectId });
  const keys = [...q.sort, ...defaultSort.filter((d) => !q.sort.some((s) => s.key === d.key)), { key: 'id', dir: 'ASC' as const }];
  keys.forEach((s, i) => (i === 0 ? qb.orderBy(`${alias}.${s.key}`, s.dir) : qb.addOrderBy(`${alias}.${s.key}`, s.dir)));
  if (q.marker === null) return qb.limit(pageSize(q)).getMany();
  const columns = orderColumns(qb, keys);
  const [first] = columns;
  // the marker must be an item of this collection; whether its first key is NULL picks the plan below
  const probe: { first_is_null: boolean } | undefined = await qb
    .clone()
    .select(`${qb.escape(alias)}.${qb.escape(first.column)} IS NULL`, 'first_is_null')
    .andWhere(`${alias}.id = :listMarker`, { listMarker: q.marker })
    .getRawOne();
  if (!probe) throw badRequest(`Invalid value '${q.marker}' specified for 'marker'`);
  qb.setParameter('listMarker', q.marker);
  if (first.nullable && !probe.first_is_null && columns.slice(1).every((c) => !c.nullable && c.dir === first.dir)) {
    return afterNonNullMarker(qb, columns, pageSize(q));
  }
  qb.andWhere(afterMarker(qb, columns));
  return qb.limit(pageSize(q)).getMany();
}

/**
 * The page after a marker whose first sort key, a column that may be NULL, is not NULL, with every
 * key in one direction (the default orders: nodes and clusters by init_at, then id). The rows with
 * a value come as one row comparison, `(a, id) > (ma, mid)`, which an index on (…, a, id) answers
 * as a range from the marker (the general form's ORs made PostgreSQL read the project's rows from
 * the start: 57 ms of its CPU per page half-way through 100,000 nodes). NULLs sort last ascending,
 * so there the rows whose key is NULL follow, read only when the page is not full yet; descending
 * they come first, before the marker, and are not on the page.
 */
async function afterNonNullMarker<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, columns: OrderColumn[], size: number): Promise<T[]> {
  const page = await qb.clone().andWhere(rowAfter(qb, columns)).limit(size).getMany();
  if (columns[0].dir === 'DESC' || page.length >= size) return page;
  const own = `${qb.escape(qb.alias)}.${qb.escape(columns[0].column)}`;
  return [...page, ...(await qb.clone().andWhere(`${own} IS NULL`).limit(size - page.length).getMany())];
}

/** A sort key as SQL sees it, for each key. */
function orderColumns<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, keys: SortKey[]): OrderColumn[] {
  const meta = qb.expressionMap.mainAlias!.metadata;
  return keys.map((k) => {
    const col = meta.findColumnWithPropertyPath(k.key);
    if (!col) throw new Error(`list sort key ${k.key} is not a column of ${meta.tableName}`);
    return { column: col.databaseName, dir: k.dir, nullable: col.isNullable };
  });
}

/** The marker row's value of a column, read by the database (a JavaScript Date would drop the microseconds). */
function markerValue<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, c: OrderColumn): string {
  const meta = qb.expressionMap.mainAlias!.metadata;
  return `(SELECT m.${qb.escape(c.column)} FROM ${qb.escape(meta.tablePath)} m WHERE m.${qb.escape('id')} = :listMarker)`;
}

/** `(a, b, id) > (ma, mb, mid)` (`<` descending): keys in one direction, compared as one row value. */
function rowAfter<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, columns: OrderColumn[]): string {
  const row = `${qb.escape(qb.alias)}.`;
  const op = columns[0].dir === 'ASC' ? '>' : '<';
  return `(${columns.map((c) => row + qb.escape(c.column)).join(', ')}) ${op} (${columns.map((c) => markerValue(qb, c)).join(', ')})`;
}

/**
 * `WHERE` text for "after the marker row in this order". PostgreSQL puts NULLs last in ascending
 * and first in descending order; the comparisons follow that. Keys that all run one way and are
 * never NULL compare as one row value, `(a, id) > (ma, mid)`, which an index on (…, a, id) answers
 * directly; otherwise the first key's bound is repeated outside the OR so an index still narrows.
 */
function afterMarker<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, columns: OrderColumn[]): string {
  const own = (c: OrderColumn) => `${qb.escape(qb.alias)}.${qb.escape(c.column)}`;
  const marker = (c: OrderColumn) => markerValue(qb, c);
  if (columns.every((c) => !c.nullable && c.dir === columns[0].dir)) return rowAfter(qb, columns);
  const same = (c: OrderColumn) => (c.nullable ? `${own(c)} IS NOT DISTINCT FROM ${marker(c)}` : `${own(c)} = ${marker(c)}`);
  const after = (c: OrderColumn) => {
    const [a, m] = [own(c), marker(c)];
    if (c.dir === 'ASC') return c.nullable ? `(${m} IS NOT NULL AND (${a} > ${m} OR ${a} IS NULL))` : `${a} > ${m}`;
    return c.nullable ? `((${m} IS NULL AND ${a} IS NOT NULL) OR ${a} < ${m})` : `${a} < ${m}`;
  };
  const branches = columns.map((c, i) => [...columns.slice(0, i).map(same), after(c)].join(' AND '));
  const first = columns[0];
  const bound = first.nullable ? '' : `${own(first)} ${first.dir === 'ASC' ? '>=' : '<='} ${marker(first)} AND `;
  return `${bound}((${branches.join(') OR (')}))`;
}

/**
 * A filter on a uuid column (`cluster_id`, `oid`, `target`): the values given, compared as uuids so
 * the column's index serves it. A value that is not a UUID names nothing (the column holds only
 * UUIDs), so a filter of nothing but such values matches no row, as the text comparison did.
 */
export function whereUuidIn<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, column: string, values: readonly string[], param: string): void {
  const ids = values.filter(isUuid).map((v) => v.toLowerCase());
  if (ids.length === 0) qb.andWhere('1 = 0');
  else qb.andWhere(`${qb.alias}.${column} IN (:...${param})`, { [param]: ids });
}

/** Senlin's action names (consts.CLUSTER_ACTION_NAMES + NODE_ACTION_NAMES), which its filters accept even where Trellis runs none. */
const SENLIN_ACTION_NAMES = [
  'CLUSTER_CREATE', 'CLUSTER_DELETE', 'CLUSTER_UPDATE', 'CLUSTER_ADD_NODES', 'CLUSTER_DEL_NODES', 'CLUSTER_RESIZE',
  'CLUSTER_CHECK', 'CLUSTER_RECOVER', 'CLUSTER_REPLACE_NODES', 'CLUSTER_SCALE_OUT', 'CLUSTER_SCALE_IN',
  'CLUSTER_ATTACH_POLICY', 'CLUSTER_DETACH_POLICY', 'CLUSTER_UPDATE_POLICY', 'CLUSTER_OPERATION',
  'NODE_CREATE', 'NODE_DELETE', 'NODE_UPDATE', 'NODE_JOIN', 'NODE_LEAVE', 'NODE_CHECK', 'NODE_RECOVER', 'NODE_OPERATION',
];

/** The values the `action` filters of actions and events accept: Senlin's names and Trellis's own. */
export const ACTION_NAME_FILTER: readonly string[] = [...new Set([...SENLIN_ACTION_NAMES, ...ClusterActions])];
