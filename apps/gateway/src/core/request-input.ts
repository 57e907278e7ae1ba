import { badRequest } from '@trellis/common';

/**
 * Checks every request gets before any route reads it, over HTTP (RequestInputMiddleware) and RPC
 * (rpc-server) alike: what no route can use is refused with a 400 naming the parameter or field.
 */

/**
 * The query parameters that take one value wherever they are accepted (Senlin read them with
 * `req.params.get`, which keeps one of several). Filters are not here: a repeated filter is ORed.
 */
export const SCALAR_QUERY_PARAMS: readonly string[] = ['limit', 'marker', 'sort', 'global_project', 'show_details', 'dry_run', 'force', 'V'];

/**
 * PostgreSQL stores no NUL character in text or jsonb, nor compares one: in a name, an id, a filter
 * or metadata it was a 500 from the database.
 */
const NUL = '\u0000';

/**
 * One value per scalar parameter (a repeated filter is fine), no `name[]` or `name[key]` forms
 * (Senlin knows no such parameter, and a nested parser would hand a route an array or an object
 * where it reads a string), no NUL character.
 */
export function checkQueryParams(query: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(query)) {
    if (key.includes(NUL)) throw badRequest('A query parameter name contains a NUL character.', 'HTTPBadRequest');
    const bracket = key.indexOf('[');
    if (bracket >= 0 || key.includes(']')) {
      const name = bracket > 0 ? key.slice(0, bracket) : key;
      throw badRequest(`Invalid parameter '${key}': a query parameter is given as ${name}=<value>, without [] or [key].`, 'HTTPBadRequest');
    }
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'object' && v !== null)) {
      // an object, as a nested query parser (qs) makes of `name[key]=value`
      throw badRequest(`Invalid parameter '${key}': a query parameter is given as ${key}=<value>, without [] or [key].`, 'HTTPBadRequest');
    }
    if (values.length > 1 && SCALAR_QUERY_PARAMS.includes(key)) {
      throw badRequest(`The query parameter '${key}' is given ${values.length} times; it takes one value.`, 'HTTPBadRequest');
    }
    if (values.some((v) => String(v).includes(NUL))) {
      throw badRequest(`The value of the query parameter '${key}' contains a NUL character.`, 'HTTPBadRequest');
    }
  }
}

/** Refuses a NUL character in any string or key of a JSON body, naming where (`cluster.metadata.k`). */
export function checkBodyText(body: unknown): void {
  const where = findNul(body);
  if (where !== null) throw badRequest(where, 'HTTPBadRequest');
}

/** A value to search, where it sits (its path is spelt out only to name a NUL), and whether its key holds one. */
interface Visit {
  value: unknown;
  parent: Visit | null;
  key: string | number | null;
  nulKey: boolean;
}

/**
 * Depth-first, in document order, without recursion: a body nested 10,000 levels deep (which JSON
 * parses) must not exhaust the stack here, before any route can answer it with a 400.
 */
function findNul(body: unknown): string | null {
  const stack: Visit[] = [{ value: body, parent: null, key: null, nulKey: false }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    if (visit.nulKey) return `A key in ${pathOf(visit.parent!) || 'the request body'} contains a NUL character.`;
    const { value } = visit;
    if (typeof value === 'string') {
      if (value.includes(NUL)) return `The value for ${pathOf(visit) || 'the request body'} contains a NUL character.`;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], parent: visit, key: i, nulKey: false });
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i];
        stack.push({ value: item, parent: visit, key, nulKey: key.includes(NUL) });
      }
    }
  }
  return null;
}

/** `cluster.metadata.k`, `nodes[2]`; '' for the body itself */
function pathOf(visit: Visit): string {
  let path = '';
  for (let v: Visit | null = visit; v !== null && v.key !== null; v = v.parent) {
    path = typeof v.key === 'number' ? `[${v.key}]${path}` : `${v.parent?.key === null ? '' : '.'}${v.key}${path}`;
  }
  return path;
}
