import fc from 'fast-check';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { MAX_BODY_BYTES } from '../../apps/gateway/src/core/request-input';
import { zoneSpec } from '../support/placement.scenario';
import { RawJson, hostileJson, hostileKey, hostileLeaf, hostileString, malformedJsonText, objectOf, toJsonText } from './hostile-values';
import { FixtureRef, RestFixtures, TokenRef, type Caller, type FixtureKind } from './rest-fixtures';
import type { Operation, Schema } from './rest-operations';
import type { WireRequest } from './wire';

/**
 * One fuzzed REST request, symbolic until it is sent: fixtures and tokens are references resolved
 * against the live fixtures, so that a case generated from a seed reaches the same handlers in every
 * run whatever earlier cases deleted.
 */
export interface RestCase {
  label: string;
  method: string;
  template: string;
  params: Record<string, ParamValue>;
  query: Array<[string, ParamValue]>;
  headers: Array<[string, string | TokenRef]>;
  body: BodyCase;
}

/** A path or query value: a fixture, text to percent-encode, or text sent as is (`%zz`). */
export type ParamValue = FixtureRef | string | Encoded;

export class Encoded {
  constructor(readonly text: string) {}
}

export type BodyCase =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown; gzip: boolean; chunked: boolean }
  | { kind: 'bytes'; bytes: Buffer; chunked: boolean }
  /** exactly `size` bytes of JSON (or of not JSON), around the body limit */
  | { kind: 'sized'; size: number; json: boolean; chunked: boolean };

const ref = (kind: FixtureKind, form: FixtureRef['form'] = 'name') => new FixtureRef(kind, form);

const conformanceInputs: Array<Record<string, any>> = readdirSync(join(__dirname, '..', 'conformance'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(__dirname, '..', 'conformance', f), 'utf8')).input);

const policySpecs = [zoneSpec, ...conformanceInputs.flatMap((i) => (i.policies ?? []).map((p: { spec: unknown }) => p.spec))];

/** Bodies each route accepts, which the fuzzer mutates: deeper into the handlers than random JSON gets. */
const TEMPLATES: Record<string, unknown[]> = {
  'POST /v1/profiles': [{ profile: { name: 'fz-p', spec: RestFixtures.profileSpec, metadata: { k: 'v' } } }],
  'POST /v1/profiles/validate': [{ profile: { spec: RestFixtures.profileSpec } }],
  'PATCH /v1/profiles/{profile_id}': [{ profile: { name: 'fz-p2', metadata: { a: 'b' } } }],
  'POST /v1/policies': policySpecs.map((spec) => ({ policy: { name: 'fz-pol', spec } })),
  'POST /v1/policies/validate': policySpecs.map((spec) => ({ policy: { spec } })),
  'PATCH /v1/policies/{policy_id}': [{ policy: { name: 'fz-pol2' } }],
  'POST /v1/clusters': [
    { cluster: { name: 'fz-c', profile_id: ref('profile'), desired_capacity: 0, min_size: 0, max_size: 2, timeout: 60, metadata: { k: 'v' }, config: {} } },
  ],
  'PATCH /v1/clusters/{cluster_id}': [{ cluster: { name: 'fz-c2', timeout: 120, metadata: { k: 'v' }, profile_id: ref('profile'), config: {} } }],
  'POST /v1/clusters/{cluster_id}/actions': [
    { scale_out: { count: 1 } },
    { scale_in: { count: 1 } },
    { resize: { adjustment_type: 'EXACT_CAPACITY', number: 1, min_size: 0, max_size: 3, strict: true } },
    { resize: { adjustment_type: 'CHANGE_IN_PERCENTAGE', number: 50, min_step: 1, strict: false } },
    { policy_attach: { policy_id: ref('policy'), enabled: true, priority: 1 } },
    { policy_detach: { policy_id: ref('policy') } },
    { policy_update: { policy_id: ref('policy'), enabled: false } },
    { add_nodes: { nodes: [ref('node')] } },
    { del_nodes: { nodes: [ref('node', 'id')], destroy_after_deletion: false } },
    { check: {} },
    { repair: {} },
    { recover: { operation: 'REBUILD' } },
    { complete_lifecycle: { lifecycle_action_token: ref('action', 'id') } },
  ],
  'POST /v1/clusters/{cluster_id}/ops': [
    { reboot: { params: { type: 'SOFT' } } },
    { reboot: { type: 'HARD' } },
    { stop: { filters: { role: 'web' } } },
    { start: { filters: { status: ['ACTIVE', 'ERROR'], name: 'fz-n' } } },
    { rebuild: {} },
  ],
  'POST /v1/nodes': [{ node: { name: 'fz-n', profile_id: ref('profile'), cluster_id: ref('cluster'), role: 'web', metadata: {} } }],
  'PATCH /v1/nodes/{node_id}': [{ node: { name: 'fz-n2', role: 'db', metadata: {}, profile_id: ref('profile') } }],
  'POST /v1/nodes/{node_id}/actions': [{ check: {} }, { recover: { operation: 'REBOOT' } }],
  'POST /v1/nodes/{node_id}/ops': [{ reboot: { type: 'SOFT' } }, { stop: {} }, { start: {} }, { rebuild: {} }, { change_password: { admin_pass: 'x' } }],
  'PATCH /v1/actions/{action_id}': [{ action: { status: 'CANCELLED' } }],
  'POST /v1/actions/{action_id}/replay': [{}],
  'POST /v1/evaluations': conformanceInputs,
  'POST /v1/receivers': [{ receiver: { name: 'fz-r', type: 'webhook', cluster_id: ref('cluster'), action: 'CLUSTER_SCALE_OUT', params: { count: 1 } } }],
  'PATCH /v1/receivers/{receiver_id}': [{ receiver: { name: 'fz-r2', action: 'CLUSTER_SCALE_IN', params: { count: 1 } } }],
  'POST /v1/webhooks/{webhook_id}/trigger': [{ count: 1 }, { params: { count: 1 } }],
};

/** The query a well-formed request of a route needs (a webhook's URL carries the version of its parameters). */
const WELL_FORMED_QUERY: Record<string, Array<[string, ParamValue]>> = {
  'POST /v1/webhooks/{webhook_id}/trigger': [['V', '2']],
};

/** Body fields that name another object: a fuzzed body names a real one as often as not. */
const REF_FIELDS: Record<string, fc.Arbitrary<unknown>> = {
  profile_id: fc.constantFrom(ref('profile'), ref('profile', 'id'), ref('profile', 'short')),
  policy_id: fc.constantFrom(ref('policy'), ref('policy', 'id')),
  cluster_id: fc.constantFrom(ref('cluster'), ref('cluster', 'id')),
  nodes: fc.array(fc.constantFrom(ref('node'), ref('node', 'id'), ref('node', 'short')), { maxLength: 3 }),
  lifecycle_action_token: fc.constant(ref('action', 'id')),
};

/** A value for a schema: what the schema asks for most of the time, something hostile otherwise. */
function schemaValue(schema: Schema, name: string | undefined, depth: number): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: plausible(schema, name, depth), weight: 3 }, { arbitrary: hostileJson, weight: 1 });
}

function plausible(schema: Schema, name: string | undefined, depth: number): fc.Arbitrary<unknown> {
  if (name !== undefined && Object.hasOwn(REF_FIELDS, name)) return REF_FIELDS[name];
  if (schema.enum?.length) return fc.constantFrom(...schema.enum);
  if (schema.oneOf?.length) return fc.oneof(...schema.oneOf.map((s) => plausible(s, name, depth)));
  switch (schema.type) {
    case 'object': {
      const extra = objectOf(hostileKey, hostileLeaf, 2);
      if (!schema.properties || depth > 3) return fc.oneof(fc.constant(schema.example ?? {}), extra);
      const fields = Object.fromEntries(Object.entries(schema.properties).map(([k, s]) => [k, schemaValue(s, k, depth + 1)]));
      return fc
        .tuple(fc.record(fields, { requiredKeys: [] }), fc.option(extra, { nil: undefined, freq: 3 }))
        .map(([known, unknown]) => Object.assign(Object.fromEntries(Object.entries(unknown ?? {})), known));
    }
    case 'array':
      return fc.array(schemaValue(schema.items ?? {}, undefined, depth + 1), { maxLength: 3 });
    case 'string':
      return schema.example !== undefined ? fc.constantFrom(schema.example, 'fz-name') : fc.constantFrom('fz-name', 'x');
    case 'integer':
      return fc.integer({ min: 0, max: 2 });
    case 'number':
      return fc.constantFrom(0, 1, 2, 1.5);
    case 'boolean':
      return fc.boolean();
    default:
      return hostileLeaf;
  }
}

/** Every path into a JSON value (a fixture reference is a leaf). */
function pathsOf(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const here = prefix.length ? [prefix] : [];
  if (value instanceof FixtureRef || value instanceof RawJson || value === null || typeof value !== 'object') return here;
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return [...here, ...entries.flatMap(([k, v]) => pathsOf(v, [...prefix, k]))];
}

type Mutation = { path: Array<string | number>; op: 'set' | 'delete' | 'add'; key: string; value: unknown };

function mutate(template: unknown, mutations: Mutation[]): unknown {
  const copy = structuredCloneWithRefs(template);
  for (const { path, op, key, value: generated } of mutations) {
    if (path.length === 0) continue;
    // a copy: generated values can be shared instances (fc.constantFrom's `[]` and `{}`), and a
    // later mutation adds keys to what an earlier one set; adding to the shared one made it cyclic
    // over the run (FUZZ_SEED=2132362742: "Maximum call stack size exceeded" in resolveRefs)
    const value = structuredCloneWithRefs(generated);
    let at: any = copy;
    for (const step of path.slice(0, -1)) at = at?.[step];
    if (at === null || typeof at !== 'object') continue;
    const last = path[path.length - 1];
    if (op === 'set') at[last] = value;
    else if (op === 'delete') Array.isArray(at) ? at.splice(Number(last), 1) : delete at[last];
    else if (at[last] !== null && typeof at[last] === 'object' && !(at[last] instanceof FixtureRef)) Object.defineProperty(at[last], key, { value, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** structuredClone, keeping FixtureRef and RawJson instances (structuredClone would make them plain objects). */
function structuredCloneWithRefs(value: unknown): unknown {
  if (value instanceof FixtureRef || value instanceof RawJson || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(structuredCloneWithRefs);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, structuredCloneWithRefs(v)]));
}

function mutatedTemplate(templates: unknown[]): fc.Arbitrary<unknown> {
  return fc.constantFrom(...templates).chain((template) => {
    const paths = pathsOf(template);
    if (paths.length === 0) return fc.constant(template);
    const mutation = fc.record({
      path: fc.constantFrom(...paths),
      op: fc.constantFrom<Mutation['op']>('set', 'set', 'set', 'delete', 'add'),
      key: hostileKey,
      value: hostileJson,
    });
    return fc.array(mutation, { minLength: 1, maxLength: 3 }).map((ms) => mutate(template, ms));
  });
}

const json = (value: unknown, gzip = false, chunked = false): BodyCase => ({ kind: 'json', value, gzip, chunked });

function bodyCase(op: Operation): fc.Arbitrary<BodyCase> {
  const templates = Object.hasOwn(TEMPLATES, op.label) ? TEMPLATES[op.label] : [];
  const takesBody = op.body !== null || templates.length > 0;
  const sized = fc
    .record({
      size: fc.constantFrom(MAX_BODY_BYTES - 1, MAX_BODY_BYTES, MAX_BODY_BYTES + 1, 4 * MAX_BODY_BYTES),
      json: fc.boolean(),
      chunked: fc.boolean(),
    })
    .map((s): BodyCase => ({ kind: 'sized', ...s }));
  const choices: Array<fc.WeightedArbitrary<BodyCase>> = [
    { arbitrary: hostileJson.map((v) => json(v)), weight: takesBody ? 3 : 2 },
    { arbitrary: fc.tuple(malformedJsonText, fc.boolean()).map(([bytes, chunked]): BodyCase => ({ kind: 'bytes', bytes, chunked })), weight: 2 },
    { arbitrary: fc.constant<BodyCase>({ kind: 'none' }), weight: takesBody ? 1 : 12 },
    { arbitrary: sized, weight: 1 },
  ];
  if (templates.length) {
    choices.push({ arbitrary: mutatedTemplate(templates).map((v) => json(v)), weight: 10 });
    choices.push({ arbitrary: fc.tuple(fc.constantFrom(...templates), fc.boolean(), fc.boolean()).map(([v, gzip, chunked]) => json(v, gzip, chunked)), weight: 2 });
  }
  if (op.body) choices.push({ arbitrary: schemaValue(op.body, undefined, 0).map((v) => json(v)), weight: 6 });
  return fc.oneof(...choices);
}

const PATH_KINDS: Record<string, fc.Arbitrary<ParamValue>> = {
  cluster_id: fc.constantFrom(ref('cluster'), ref('cluster', 'id'), ref('cluster', 'short')),
  profile_id: fc.constantFrom(ref('profile'), ref('profile', 'id'), ref('profile', 'short')),
  policy_id: fc.constantFrom(ref('policy'), ref('policy', 'id'), ref('policy', 'short')),
  node_id: fc.constantFrom(ref('node'), ref('node', 'id'), ref('node', 'short')),
  action_id: fc.constantFrom(ref('action', 'id'), ref('action', 'short')),
  event_id: fc.constantFrom(ref('event', 'id'), ref('event', 'short')),
  receiver_id: fc.constantFrom(ref('receiver'), ref('receiver', 'id'), ref('receiver', 'short')),
  webhook_id: fc.constant(ref('receiver', 'id')),
  type_name: fc.constantFrom('os.nova.server-1.0', 'senlin.policy.zone_placement-1.0', 'senlin.policy.affinity-1.0', 'os.nova.server', 'os.heat.stack-1.0'),
  path: fc.constantFrom('name', 'details', 'details.addresses', 'status', 'metadata.k', '$.a', 'a..b'),
};

/** Percent sequences a client can put on the request line that do not decode (or decode to something odd). */
const RAW_ENCODINGS = fc.constantFrom('%', '%zz', '%FF', '%C0%AF', '%2F', '%2e%2e', '%00', 'a%2Fb', '%E2%80%AE', '%ED%A0%80', '..', '.', '');

const wellFormedPathValue = (name: string): fc.Arbitrary<ParamValue> => (Object.hasOwn(PATH_KINDS, name) ? PATH_KINDS[name] : hostileString);

function pathValue(name: string): fc.Arbitrary<ParamValue> {
  return fc.oneof(
    { arbitrary: wellFormedPathValue(name), weight: 2 },
    { arbitrary: hostileString, weight: 4 },
    { arbitrary: RAW_ENCODINGS.map((t) => new Encoded(t)), weight: 2 },
    { arbitrary: fc.uuid(), weight: 1 },
  );
}

const BOOLEAN_WORDS = fc.constantFrom('true', 'false', '1', '0', 'yes', 'off', 'maybe', '', 'TRUE');
const QUERY_VALUES: Record<string, fc.Arbitrary<ParamValue>> = {
  limit: fc.constantFrom('0', '1', '2', '1000', '1001', '-1', '1.5', 'abc', '2147483648', '1e3'),
  marker: fc.constantFrom(ref('cluster', 'id'), ref('node', 'id'), ref('action', 'id'), ref('event', 'id'), ref('profile', 'id'), ref('policy', 'id'), ref('receiver', 'id')),
  sort: fc.constantFrom('name', 'name:asc', 'created_at:desc', 'status:sideways', 'bogus', 'name,status', ':', '', 'timestamp', 'init_at:desc,name'),
  global_project: BOOLEAN_WORDS,
  show_details: BOOLEAN_WORDS,
  dry_run: BOOLEAN_WORDS,
  force: BOOLEAN_WORDS,
  enabled: BOOLEAN_WORDS,
  V: fc.constantFrom('1', '2', '3', ''),
  cluster_id: fc.constantFrom(ref('cluster'), ref('cluster', 'id')),
  name: fc.constantFrom(ref('cluster'), ref('node'), ref('profile'), 'fz-none'),
  status: fc.constantFrom('ACTIVE', 'INIT', 'ERROR', 'SUCCEEDED', 'OPEN', 'bogus'),
};
const UNKNOWN_QUERY_NAMES = fc.constantFrom('foo', 'limit[]', 'name[a]', '__proto__', 'constructor', 'a%00b', '%zz', '', 'LIMIT', 'sort_dir', 'sort_key');

function queryCase(op: Operation): fc.Arbitrary<Array<[string, ParamValue]>> {
  const names = op.queryParams.length
    ? fc.oneof({ arbitrary: fc.constantFrom(...op.queryParams), weight: 4 }, { arbitrary: UNKNOWN_QUERY_NAMES, weight: 1 })
    : UNKNOWN_QUERY_NAMES;
  const pair = names.chain((name) =>
    fc
      .oneof(
        { arbitrary: Object.hasOwn(QUERY_VALUES, name) ? QUERY_VALUES[name] : hostileString, weight: 4 },
        { arbitrary: hostileString, weight: 2 },
        { arbitrary: RAW_ENCODINGS.map((t) => new Encoded(t)), weight: 1 },
      )
      .map((value): [string, ParamValue] => [name, value]),
  );
  return fc.array(pair, { maxLength: op.queryParams.length ? 4 : 1 }).chain((pairs) => (op.queryParams.length ? fc.constant(pairs) : fc.constantFrom(pairs, [], [], [])));
}

/** What Node lets a client put in a header value: latin-1 without control characters. */
export const headerSafe = (s: string) => Array.from(s, (c) => (c.codePointAt(0)! >= 0x20 && c.codePointAt(0)! <= 0xff && c !== '\x7f' ? c : '?')).join('');

const hostileHeader = hostileString.map(headerSafe);
const CALLERS: Caller[] = ['demo', 'admin', 'viewer', 'alt'];
const BAD_VERSIONS = fc.constantFrom(
  'clustering',
  'clustering 1',
  'clustering 1.',
  'clustering .1',
  'clustering 01.05',
  'clustering 1.14.1',
  'clustering 1.15',
  'clustering 2.0',
  'clustering 0.9',
  'clustering 1.99999999999999999999',
  'clustering -1.0',
  'clustering 1.0e1',
  'clustering LATEST',
  'CLUSTERING 1.2',
  'compute 2.1, clustering 1.5',
  'compute 2.1',
  'clustering 1.2, clustering 1.99',
  ',,,',
  '',
);

function headerCase(hasBody: fc.Arbitrary<boolean>): fc.Arbitrary<Array<[string, string | TokenRef]>> {
  const optional = (name: string, value: fc.Arbitrary<string | TokenRef>, absentWeight: number) =>
    fc.oneof({ arbitrary: fc.constant(null), weight: absentWeight }, { arbitrary: value.map((v): [string, string | TokenRef] => [name, v]), weight: 1 });
  const token = fc.oneof(
    { arbitrary: fc.constantFrom(...CALLERS).map((c) => new TokenRef(c)), weight: 12 },
    { arbitrary: hostileHeader, weight: 3 },
    { arbitrary: fc.constantFrom('gAAAAABforged', '0'.repeat(32), 'x'.repeat(20_000)), weight: 1 },
  );
  const version = fc.oneof(
    { arbitrary: fc.constant('clustering 1.14'), weight: 4 },
    { arbitrary: fc.integer({ min: 0, max: 14 }).map((m) => `clustering 1.${m}`), weight: 2 },
    { arbitrary: fc.constant('clustering latest'), weight: 1 },
    { arbitrary: BAD_VERSIONS, weight: 2 },
    { arbitrary: hostileHeader.map((s) => `clustering ${s}`), weight: 1 },
  );
  return fc
    .tuple(
      optional('X-Auth-Token', token, 1),
      optional('OpenStack-API-Version', version, 1),
      optional('X-OpenStack-Clustering-API-Version', fc.oneof(BAD_VERSIONS, hostileHeader, fc.constant('1.14')), 8),
      optional('Accept', fc.constantFrom('application/vnd.openstack.clustering-v1.99', 'application/vnd.openstack.clustering-v2', 'application/vnd.openstack.clustering-v1.5', 'text/html', '*/*'), 10),
      optional('Idempotency-Key', fc.oneof(fc.uuid(), hostileHeader), 8),
      optional('Content-Encoding', fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-bogus', 'gzip, gzip', 'zstd'), 14),
      hasBody.chain((body) =>
        body
          ? optional(
              'Content-Type',
              fc.oneof(
                { arbitrary: fc.constant('application/json'), weight: 6 },
                {
                  arbitrary: fc.constantFrom(
                    'text/plain',
                    'application/x-www-form-urlencoded',
                    'application/json; charset=utf-16',
                    'application/json; charset=latin1',
                    'application/json; charset=bogus',
                    'multipart/form-data; boundary=x',
                    'application/json; charset=utf-8',
                  ),
                  weight: 2,
                },
              ),
              1,
            )
          : fc.constant(null),
      ),
    )
    .map((headers) => headers.filter((h): h is [string, string | TokenRef] => h !== null));
}

const OTHER_METHODS = fc.constantFrom('PUT', 'OPTIONS', 'HEAD', 'TRACE', 'GET', 'POST', 'PATCH', 'DELETE');

/** Headers of a well-formed request: a real caller's token and a supported microversion. */
function wellFormedHeaders(hasBody: boolean): fc.Arbitrary<Array<[string, string | TokenRef]>> {
  return fc
    .tuple(fc.constantFrom<Caller>('demo', 'demo', 'demo', 'admin'), fc.oneof({ arbitrary: fc.constant(14), weight: 3 }, { arbitrary: fc.integer({ min: 0, max: 14 }), weight: 1 }))
    .map(([caller, minor]) => [
      ['X-Auth-Token', new TokenRef(caller)],
      ['OpenStack-API-Version', `clustering 1.${minor}`],
      ...(hasBody ? ([['Content-Type', 'application/json']] as Array<[string, string]>) : []),
    ]);
}

/** The body a well-formed request of `op` sends: one of its templates, or none. */
function wellFormedBody(op: Operation): fc.Arbitrary<BodyCase> {
  const templates = Object.hasOwn(TEMPLATES, op.label) ? TEMPLATES[op.label] : [];
  return templates.length ? fc.constantFrom(...templates).map((v) => json(v)) : fc.constant<BodyCase>({ kind: 'none' });
}

/**
 * Which part of the request is hostile. A request hostile everywhere is refused at its first check
 * (most often the token), so most cases keep every other part well-formed and reach the check of the
 * part they aim at; `everything` keeps the combinations.
 */
type Focus = 'body' | 'headers' | 'path' | 'query' | 'method' | 'everything';
const FOCUS = fc.oneof(
  { arbitrary: fc.constant<Focus>('body'), weight: 8 },
  { arbitrary: fc.constantFrom<Focus>('headers', 'path', 'query'), weight: 6 },
  { arbitrary: fc.constantFrom<Focus>('method', 'everything'), weight: 1 },
);

/** A fuzzed request for one of the operations. */
export function restCase(operations: Operation[]): fc.Arbitrary<RestCase> {
  return fc.tuple(fc.constantFrom(...operations), FOCUS).chain(([op, focus]) => {
    const hostile = (part: Focus) => focus === part || focus === 'everything';
    return fc
      .record({
        label: fc.constant(op.label),
        method: hostile('method') ? OTHER_METHODS : fc.constant<string>(op.method),
        template: fc.constant(op.template),
        params: fc.record(Object.fromEntries(op.pathParams.map((p) => [p, hostile('path') ? pathValue(p) : wellFormedPathValue(p)]))),
        query: hostile('query') ? queryCase(op) : fc.constant<Array<[string, ParamValue]>>(Object.hasOwn(WELL_FORMED_QUERY, op.label) ? WELL_FORMED_QUERY[op.label] : []),
        body: hostile('body') ? bodyCase(op) : wellFormedBody(op),
      })
      .chain((c) => {
        const hasBody = c.body.kind !== 'none';
        return (hostile('headers') ? headerCase(fc.constant(hasBody)) : wellFormedHeaders(hasBody)).map((headers): RestCase => ({ ...c, headers }));
      });
  });
}

/** Every byte outside RFC 3986's unreserved set percent-encoded (lone surrogates become U+FFFD, as on any wire). */
export function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function resolveRefs(value: unknown, fixtures: RestFixtures): unknown {
  if (value instanceof FixtureRef) return fixtures.resolve(value);
  if (value instanceof RawJson || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, fixtures));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(v, fixtures)]));
}

function encodeParam(value: ParamValue, fixtures: RestFixtures): string {
  if (value instanceof Encoded) return value.text;
  return percentEncode(value instanceof FixtureRef ? fixtures.resolve(value) : value);
}

function sizedBody(size: number, json: boolean): Buffer {
  if (!json) return Buffer.alloc(size, 0x7b);
  const open = '{"pad":"';
  const close = '"}';
  return Buffer.from(open + 'x'.repeat(Math.max(0, size - open.length - close.length)) + close, 'utf8');
}

/** The request as it goes on the wire, and its body's decoded size (what the body limit counts). */
export function toWire(c: RestCase, fixtures: RestFixtures): { request: WireRequest; decodedBytes: number } {
  const path = c.template.replace(/\{([A-Za-z_]+)\}/g, (_, name: string) => encodeParam(c.params[name], fixtures));
  const query = c.query.map(([k, v]) => `${encodeName(k)}=${encodeParam(v, fixtures)}`).join('&');
  const headers: Record<string, string> = {};
  for (const [name, value] of c.headers) headers[name] = value instanceof TokenRef ? fixtures.token(value) : value;
  let body: Buffer | null = null;
  let decodedBytes = 0;
  let chunked = false;
  if (c.body.kind === 'json') {
    const text = Buffer.from(toJsonText(resolveRefs(c.body.value, fixtures)), 'utf8');
    decodedBytes = text.length;
    body = c.body.gzip ? gzipSync(text) : text;
    if (c.body.gzip) headers['Content-Encoding'] = 'gzip';
    chunked = c.body.chunked;
  } else if (c.body.kind === 'bytes') {
    body = c.body.bytes;
    decodedBytes = body.length;
    chunked = c.body.chunked;
  } else if (c.body.kind === 'sized') {
    body = sizedBody(c.body.size, c.body.json);
    decodedBytes = body.length;
    chunked = c.body.chunked;
  }
  return { request: { method: c.method, path: query ? `${path}?${query}` : path, headers, body, chunked }, decodedBytes };
}

/** Query names are sent as generated where they are the point (`limit[]`, `%zz`), else encoded. */
const encodeName = (name: string) => (/^[A-Za-z0-9_\-.~[\]%]*$/.test(name) ? name : percentEncode(name));
