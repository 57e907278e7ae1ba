import fc from 'fast-check';
import { rpcRoutes, type RpcTargets } from '../../apps/gateway/src/rpc/rpc-routes';
import { RawJson, hostileJson, hostileKey, hostileString, objectOf, toJsonText } from './hostile-values';
import { notAMessage } from './queue-messages';
import { Encoded, restCase, type ParamValue, type RestCase } from './rest-cases';
import { FixtureRef, TokenRef, type RestFixtures } from './rest-fixtures';
import type { Operation } from './rest-operations';

/**
 * Fuzzed RPC requests for `trellis.gateway.rpc`: the REST cases (rest-cases.ts) carried as RPC
 * (pattern, token, microversion, params, body), and envelopes no REST request can be (not JSON,
 * unknown fields, fields of the wrong type, no or an unknown pattern).
 */
export type RpcCase =
  | { kind: 'rest'; pattern: string; rest: RestCase }
  | { kind: 'raw'; label: string; pattern: string | undefined; content: Buffer }
  | { kind: 'envelope'; label: string; pattern: string | undefined; envelope: Record<string, unknown> };

/** REST label (`GET /v1/clusters/{cluster_id}`) → RPC pattern (`cluster.show`), from the gateway's route table. */
export function rpcPatterns(): Map<string, string> {
  return new Map([...rpcRoutes({} as RpcTargets).entries()].map(([pattern, route]) => [route.rest, pattern]));
}

const PATTERNS = [...rpcPatterns().values()];
const somePattern = fc.oneof(
  { arbitrary: fc.constantFrom(...PATTERNS), weight: 4 },
  { arbitrary: fc.constantFrom(undefined, '', 'cluster.explode', 'Cluster.List', 'cluster.list ', '__proto__', 'constructor'), weight: 1 },
  { arbitrary: hostileString.filter((s) => Buffer.byteLength(s) <= 255), weight: 1 },
);

const envelopeField = (name: string) =>
  ({
    token: fc.oneof(fc.constant(new TokenRef('demo')), hostileJson),
    microversion: fc.oneof(fc.constantFrom('1.14', 'latest', '1.99', 'x'), hostileJson),
    params: fc.oneof(objectOf(fc.oneof(fc.constantFrom('cluster_id', 'limit', 'marker'), hostileKey), hostileJson), hostileJson),
    body: hostileJson,
  })[name] ?? hostileJson;

const envelope = fc
  .tuple(fc.subarray(['token', 'microversion', 'params', 'body']), fc.option(fc.tuple(hostileKey, hostileJson), { freq: 3, nil: undefined }))
  .chain(([keys, unknown]) =>
    fc.record(Object.fromEntries(keys.map((k) => [k, envelopeField(k)]))).map((fields) => (unknown ? Object.assign(Object.fromEntries([unknown]), fields) : fields)),
  );

export function rpcCase(operations: Operation[]): fc.Arbitrary<RpcCase> {
  const patterns = rpcPatterns();
  const served = operations.filter((o) => patterns.has(o.label));
  return fc.oneof(
    { arbitrary: restCase(served).map((rest): RpcCase => ({ kind: 'rest', pattern: patterns.get(rest.label)!, rest })), weight: 6 },
    { arbitrary: fc.tuple(notAMessage, somePattern).map(([m, pattern]): RpcCase => ({ kind: 'raw', label: m.label, pattern, content: m.content })), weight: 1 },
    { arbitrary: fc.tuple(envelope, somePattern).map(([e, pattern]): RpcCase => ({ kind: 'envelope', label: 'hostile envelope', pattern, envelope: e })), weight: 2 },
  );
}

function resolve(value: unknown, fixtures: RestFixtures): unknown {
  if (value instanceof FixtureRef) return fixtures.resolve(value);
  if (value instanceof TokenRef) return fixtures.token(value);
  if (value instanceof RawJson || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => resolve(v, fixtures));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, fixtures)]));
}

const paramText = (value: ParamValue, fixtures: RestFixtures) =>
  value instanceof Encoded ? value.text : value instanceof FixtureRef ? fixtures.resolve(value) : value;

/** The RPC message of a case: its AMQP `type` and content. */
export function toRpcMessage(c: RpcCase, fixtures: RestFixtures): { pattern: string | undefined; content: Buffer } {
  if (c.kind === 'raw') return { pattern: c.pattern, content: c.content };
  if (c.kind === 'envelope') return { pattern: c.pattern, content: Buffer.from(toJsonText(resolve(c.envelope, fixtures)), 'utf8') };
  if (c.rest.body.kind === 'bytes') return { pattern: c.pattern, content: c.rest.body.bytes };
  const { rest } = c;
  const request: Record<string, unknown> = {};
  const header = (name: string) => rest.headers.find(([n]) => n === name)?.[1];
  const token = header('X-Auth-Token');
  if (token !== undefined) request.token = token instanceof TokenRef ? fixtures.token(token) : token;
  const version = header('OpenStack-API-Version');
  if (typeof version === 'string') request.microversion = version.replace(/^clustering /, '');
  const params: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(rest.params)) params[name] = paramText(value, fixtures);
  for (const [name, value] of rest.query) {
    const text = paramText(value, fixtures);
    const before = params[name];
    params[name] = before === undefined ? text : [...[before].flat(), text];
  }
  if (Object.keys(params).length) request.params = params;
  if (rest.body.kind === 'json') request.body = resolve(rest.body.value, fixtures);
  if (rest.body.kind === 'sized') request.body = { pad: 'x'.repeat(rest.body.size) };
  return { pattern: c.pattern, content: Buffer.from(toJsonText(request), 'utf8') };
}
