import fc from 'fast-check';
import { Queues, SCHEMA_VERSION, WORK_ORDER_SCHEMA_VERSION, WorkOrderMessage, acceptedSchemaVersions } from '@trellis/contracts';
import { hostileJson, hostileKey, hostileLeaf, hostileNesting, hostileString, malformedJsonText, objectOf, toJsonText } from './hostile-values';

/**
 * Hostile messages for the consumer queues of libs/contracts (ConsumerQueues): bytes that are not
 * JSON, JSON that is not an object, and each queue's message contract with at least one field
 * broken (and, for the engine's action queue, a well-formed message for an action that does not
 * exist), under hostile AMQP properties. Every one of them is bad: its consumer must dead-letter it.
 */
export interface HostileMessage {
  /** what was done to it, for the failure message */
  label: string;
  content: Buffer;
  properties: {
    messageId?: string;
    type?: string;
    correlationId?: string;
    contentType?: string;
    contentEncoding?: string;
    headers: Record<string, unknown>;
    priority?: number;
    persistent?: boolean;
  };
}

type Fields = Record<string, unknown>;

/** A field of a contract and values its validation refuses. */
interface Violation {
  path: Array<string | number>;
  /** refused values; `undefined` removes the field (for required fields without a default) */
  values: fc.Arbitrary<unknown>;
}

const uuid = fc.uuid({ version: 4 });
const notUuid = fc.oneof(hostileString.filter((s) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)), fc.integer(), fc.constantFrom(true, [], {}));
const notString = fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.constantFrom(true, false, null, [], {}, ['x']));
const notInt = fc.oneof(fc.constantFrom('1', 1.5, null, true, [], {}, '60'), hostileString);
const notArray = fc.oneof(hostileString, fc.integer(), fc.constantFrom(null, {}, true));
const notObject = fc.oneof(hostileString, fc.integer(), fc.constantFrom(null, [], [{}], true));
const notIn = (allowed: readonly unknown[]) => fc.oneof(hostileString, notString).filter((v) => !allowed.includes(v));
const removed = fc.constant(undefined);
const required = (values: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: values, weight: 4 }, { arbitrary: removed, weight: 1 });

const envelope = (action: string, version = SCHEMA_VERSION): fc.Arbitrary<Fields> =>
  fc.record({ message_id: uuid, action_id: uuid, cluster_id: fc.option(uuid, { nil: null }) }).map((ids) => ({
    ...ids,
    schema_version: version,
    correlation_id: 'fuzz-case',
    action,
  }));

/** the envelope's violations for a contract that takes the schema versions `accepted` */
const envelopeViolations = (accepted: readonly number[] = [SCHEMA_VERSION]): Violation[] => [
  { path: ['message_id'], values: required(notUuid) },
  { path: ['schema_version'], values: required(fc.oneof(fc.integer().filter((n) => !accepted.includes(n)), notInt)) },
  { path: ['action_id'], values: required(notUuid) },
  { path: ['correlation_id'], values: required(fc.oneof(notString, fc.constantFrom('', 'a b', 'x'.repeat(129), 'ü', 'a\u0000b'))) },
  { path: ['cluster_id'], values: notUuid },
];
/** the contracts that name the action (a work result does not) */
const ACTION_VIOLATION: Violation = { path: ['action'], values: required(notString) };

interface Contract {
  template: fc.Arbitrary<Fields>;
  violations: Violation[];
  /** the template as generated is already bad (it names an action nobody stored) */
  templateIsBad: boolean;
}

const CAUSES = ['submitted', 'replay', 'resume', 'cancel'];
const OUTCOMES = ['SUCCEEDED', 'FAILED'];
const NODE_STATUSES = ['ACTIVE', 'ERROR', 'DELETED', 'LEFT'];
const KINDS = ['create', 'delete', 'mixed', 'cloud', 'ops'];

/** The contract of each consumer queue but the RPC queue (which answers, see rpc cases). */
export const CONTRACTS: Record<string, Contract> = {
  [Queues.engineActions]: {
    template: fc.tuple(envelope('CLUSTER_SCALE_OUT'), fc.constantFrom(...CAUSES)).map(([e, cause]) => ({ ...e, project: 'fuzz-project', cause })),
    violations: [...envelopeViolations(), ACTION_VIOLATION, { path: ['project'], values: required(notString) }, { path: ['cause'], values: required(notIn(CAUSES)) }],
    templateIsBad: true,
  },
  [Queues.engineResults]: {
    template: fc.tuple(envelope('CLUSTER_SCALE_OUT'), uuid).map(([e, node]) => ({
      ...e,
      outcome: 'SUCCEEDED',
      reason: 'ok',
      nodes: [{ node_id: node, status: 'ACTIVE', physical_id: 'server-1', zone: 'az1', host: 'host-1', reason: null }],
      groups: {},
    })),
    violations: [
      ...envelopeViolations(),
      { path: ['outcome'], values: required(notIn(OUTCOMES)) },
      { path: ['reason'], values: required(notString) },
      { path: ['nodes'], values: required(notArray) },
      { path: ['nodes', 0], values: fc.oneof(hostileString, fc.integer(), fc.constantFrom(null, [], true)) },
      { path: ['nodes', 0, 'node_id'], values: required(notUuid) },
      { path: ['nodes', 0, 'status'], values: required(notIn(NODE_STATUSES)) },
      { path: ['nodes', 0, 'physical_id'], values: fc.oneof(fc.integer(), fc.constantFrom(true, [], {})) },
      { path: ['groups'], values: required(notObject) },
    ],
    templateIsBad: false,
  },
  [Queues.workerOrders]: {
    template: fc.tuple(envelope('CLUSTER_SCALE_OUT', WORK_ORDER_SCHEMA_VERSION), uuid).map(([e, node]) => ({
      ...e,
      project: 'fuzz-project',
      user: 'fuzz-user',
      kind: 'create',
      create_groups: [{ ref: 'g1', name: 'fz-group', policy: 'anti-affinity' }],
      create_servers: [{ node_id: node, name: 'fz-node', index: 0, placement: { zone: 'az1', servergroup: 'g1' }, metadata: {} }],
      profile: { flavor: 'm1.tiny', image: 'cirros-fake' },
      delete_servers: [],
      delete_groups: [],
      build_timeout: 60,
    })),
    violations: [
      ...envelopeViolations(acceptedSchemaVersions(WorkOrderMessage)),
      ACTION_VIOLATION,
      { path: ['project'], values: required(notString) },
      { path: ['user'], values: required(notString) },
      { path: ['kind'], values: required(notIn(KINDS)) },
      { path: ['build_timeout'], values: required(fc.oneof(notInt, fc.constantFrom(0, -1, -(2 ** 31)))) },
      { path: ['create_groups'], values: notArray },
      { path: ['create_groups', 0, 'ref'], values: required(notString) },
      { path: ['create_servers'], values: notArray },
      { path: ['create_servers', 0, 'node_id'], values: required(notUuid) },
      { path: ['create_servers', 0, 'index'], values: required(fc.oneof(notInt, fc.constantFrom(-1, -(2 ** 31)))) },
      { path: ['create_servers', 0, 'placement'], values: notObject },
      { path: ['profile'], values: required(notObject) },
      // a server's own profile (orders of schema_version 1) may be absent, but not anything else
      { path: ['create_servers', 0, 'profile'], values: notObject.filter((v) => v !== null) },
      { path: ['delete_servers'], values: fc.oneof(notArray, fc.constant([{ node_id: 'x', destroy: 'yes' }])) },
      { path: ['server_ops'], values: fc.oneof(notArray.filter((v) => v !== null), fc.constant([{ node_id: 'x', op: 1, params: [] }])) },
    ],
    templateIsBad: false,
  },
};

function setPath(target: Fields, path: Array<string | number>, value: unknown): void {
  let at: any = target;
  for (const step of path.slice(0, -1)) {
    if (at?.[step] === null || typeof at?.[step] !== 'object') return;
    at = at[step];
  }
  const last = path[path.length - 1];
  if (value === undefined) delete at[last];
  else at[last] = value;
}

/** Mutations that do not by themselves make the message invalid: extra keys, hostile free-form values. */
const harmless = fc.array(
  fc.oneof(
    fc.record({ path: fc.constant<Array<string | number>>([]), key: hostileKey, value: hostileJson }),
    fc.record({ path: fc.constant<Array<string | number>>(['profile']), key: hostileKey, value: fc.oneof(hostileJson, hostileNesting) }),
    fc.record({ path: fc.constant<Array<string | number>>(['create_servers', 0, 'metadata']), key: hostileKey, value: hostileLeaf }),
  ),
  { maxLength: 3 },
);

function contractBody(contract: Contract): fc.Arbitrary<{ label: string; body: Fields }> {
  const broken = fc.array(
    fc.constantFrom(...contract.violations).chain((v) => v.values.map((value) => ({ path: v.path, value }))),
    { minLength: contract.templateIsBad ? 0 : 1, maxLength: 3 },
  );
  return fc.tuple(contract.template, broken, harmless).map(([template, violations, extras]) => {
    const body = structuredClone(template);
    for (const { path, key, value } of extras) {
      const at = path.reduce<any>((o, step) => (o && typeof o === 'object' ? o[step] : undefined), body);
      if (at && typeof at === 'object' && !Array.isArray(at)) Object.defineProperty(at, key, { value, enumerable: true, writable: true, configurable: true });
    }
    for (const { path, value } of violations) setPath(body, path, value);
    const label = violations.length ? `broken ${violations.map((v) => v.path.join('.')).join(', ')}` : 'for an action that does not exist';
    return { label, body };
  });
}

/** Bodies that are bad for any consumer: not JSON, or JSON that is not an object. */
export const notAMessage: fc.Arbitrary<{ label: string; content: Buffer }> = fc.oneof(
  malformedJsonText.map((content) => ({ label: 'not JSON', content })),
  fc.constant({ label: 'empty', content: Buffer.alloc(0) }),
  fc.constant({ label: '1 MiB of binary', content: Buffer.alloc(1024 * 1024, 0xff) }),
  fc.oneof(hostileLeaf, fc.array(hostileLeaf, { maxLength: 3 }), hostileNesting).map((v) => ({ label: 'JSON that is not an object', content: Buffer.from(toJsonText(v), 'utf8') })),
);

const BROKER_HEADERS = ['CC', 'BCC'];

/** AMQP properties a publisher can set, hostile ones included; `x-fuzz-case` is added when sending. */
export const hostileProperties: fc.Arbitrary<HostileMessage['properties']> = fc.record(
  {
    messageId: fc.oneof(uuid, fc.constantFrom('', 'x'.repeat(255)), hostileString.filter((s) => Buffer.byteLength(s) <= 255)),
    type: fc.oneof(fc.constantFrom('action.requested', 'work.order', 'work.result', 'cluster.list', 'bogus'), hostileString.filter((s) => Buffer.byteLength(s) <= 255)),
    correlationId: fc.oneof(fc.constant('fuzz'), hostileString.filter((s) => Buffer.byteLength(s) <= 255)),
    contentType: fc.constantFrom('application/json', 'text/plain', 'application/octet-stream', ''),
    contentEncoding: fc.constantFrom('gzip', 'utf-16', 'bogus'),
    headers: objectOf(
      fc.oneof(
        fc.constantFrom('x-trellis-dead-letter-reason', 'x-trellis-original-queue', 'x-delivery-count', 'x-trellis-schema-version', 'x-trellis-in-reply-to', 'x-death', 'x-first-death-reason'),
        // CC and BCC are routing instructions to RabbitMQ itself, which refuses them as strings
        fc.string({ maxLength: 12 }).filter((k) => !BROKER_HEADERS.includes(k)),
      ),
      fc.oneof(fc.string({ maxLength: 20 }), fc.integer({ min: -1000, max: 1000 }), fc.boolean(), fc.constantFrom('999', -1, 0)),
      4,
    ),
    priority: fc.integer({ min: 0, max: 255 }),
    persistent: fc.boolean(),
  },
  { requiredKeys: ['headers'] },
);

/** A bad message for `queue`: its contract broken, or not a message at all. */
export function hostileMessage(queue: string): fc.Arbitrary<HostileMessage> {
  const contract = Object.hasOwn(CONTRACTS, queue) ? CONTRACTS[queue] : null;
  const bodies = contract
    ? fc.oneof(
        { arbitrary: contractBody(contract).map(({ label, body }) => ({ label, content: Buffer.from(toJsonText(body), 'utf8') })), weight: 3 },
        { arbitrary: notAMessage, weight: 1 },
      )
    : notAMessage;
  return fc.tuple(bodies, hostileProperties).map(([{ label, content }, properties]) => ({ label, content, properties }));
}
