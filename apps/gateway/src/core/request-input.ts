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
 * A UTF-16 surrogate without its pair, which only a JSON escape (`"\ud800"`) can put in a body: it is
 * not Unicode, so PostgreSQL refuses it in jsonb (a 500, found by the fuzz suite) and a text column
 * would store U+FFFD in its place.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

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

/**
 * The largest request body the gateway reads: over REST its decoded size (after Content-Encoding),
 * refused by the body parser before anything else runs; over RPC the whole request message. Senlin's
 * max_json_body_size default. Larger ones are a 413 in Senlin's error body (README, "Limits").
 */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * How deep a request body may nest objects and lists (the body itself is level 1), far above what a
 * request needs: Senlin's worked examples nest 7 levels, policy specs 5. Deeper bodies were a 500:
 * code that walks a value recursively (JSON.stringify in an error message, the idempotency
 * fingerprint, PostgreSQL's jsonb) ran out of stack on 100,000 levels, which JSON.parse takes.
 */
export const MAX_BODY_DEPTH = 32;

/**
 * Refuses a NUL character or a lone surrogate in any string or key of a JSON body, and a body
 * nested more than MAX_BODY_DEPTH levels, naming where (`cluster.metadata.k`).
 */
export function checkBodyText(body: unknown): void {
  const where = findProblem(body);
  if (where !== null) throw badRequest(where, 'HTTPBadRequest');
}

/** A value to search, where it sits (its path is spelt out only to name a problem), and what is wrong with its key. */
interface Visit {
  value: unknown;
  parent: Visit | null;
  key: string | number | null;
  badKey: string | null;
  depth: number;
}

/** What makes a string unusable, or null. */
function textProblem(text: string): string | null {
  if (text.includes(NUL)) return 'a NUL character';
  if (LONE_SURROGATE.test(text)) return 'a lone UTF-16 surrogate (not Unicode)';
  return null;
}

/**
 * Depth-first, in document order, without recursion: a body nested 100,000 levels deep (which JSON
 * parses) must not exhaust the stack here, before any route can answer it with a 400.
 */
function findProblem(body: unknown): string | null {
  const stack: Visit[] = [{ value: body, parent: null, key: null, badKey: null, depth: 1 }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    if (visit.badKey) return `A key in ${pathOf(visit.parent!) || 'the request body'} contains ${visit.badKey}.`;
    const { value, depth } = visit;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) return `The value for ${pathOf(visit) || 'the request body'} contains ${problem}.`;
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_BODY_DEPTH) return `The request body is nested more than ${MAX_BODY_DEPTH} levels deep at ${pathOf(visit)}.`;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], parent: visit, key: i, badKey: null, depth: depth + 1 });
    } else {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i];
        stack.push({ value: item, parent: visit, key, badKey: textProblem(key), depth: depth + 1 });
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
