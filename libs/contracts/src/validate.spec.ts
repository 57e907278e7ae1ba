import { ActionRequestedMessage, ServerCreateDto, WorkOrderMessage, WorkResultMessage } from './messages';
import { ContractViolation, MAX_MESSAGE_DEPTH, parseContract } from './validate';

const valid = {
  message_id: '6f1c7a5e-2b1d-4c39-9a59-3f1c1e0b6a01',
  schema_version: 1,
  action_id: '0b8f3a52-7a7e-4b0c-8a55-0e3c5f6b2d11',
  correlation_id: 'req-1',
  cluster_id: null,
  action: 'CLUSTER_SCALE_OUT',
  project: 'p',
  cause: 'submitted',
};

/** `levels` objects, one inside the other */
const nested = (levels: number): unknown => JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`);

describe('parseContract', () => {
  it('takes a valid message, unknown fields and all', () => {
    expect(parseContract(ActionRequestedMessage, { ...valid, extra: nested(MAX_MESSAGE_DEPTH - 1) })).toMatchObject(valid);
  });

  it.each([10_000, 100_000])(
    // a RangeError from class-transformer before: consumers retried it until the delivery limit (the fuzz suite found it)
    'refuses a message nested %i levels deep as a contract violation, without running out of stack',
    (levels) => {
      const violation = (() => {
        try {
          parseContract(ActionRequestedMessage, { ...valid, extra: nested(levels) });
        } catch (e) {
          return e;
        }
      })();
      expect(violation).toBeInstanceOf(ContractViolation);
      expect((violation as ContractViolation).problems).toEqual([`body: nested more than ${MAX_MESSAGE_DEPTH} levels deep`]);
    },
  );

  it('keeps keys named constructor and __proto__ in free-form values, and makes nested messages their classes', () => {
    // a profile's server metadata with a `constructor` key made class-transformer throw: every work
    // order of the cluster was dead-lettered and its actions timed out (found by the fuzz suite)
    const metadata = JSON.parse('{"constructor": "x", "__proto__": {"a": 1}, "role": "web"}');
    const order = parseContract(WorkOrderMessage, {
      ...valid,
      user: 'u',
      kind: 'create',
      create_servers: [{ node_id: valid.action_id, name: 'n', index: 0, placement: {}, profile: { flavor: 'f', metadata }, metadata }],
      build_timeout: 60,
    });
    expect(order.create_servers[0]).toBeInstanceOf(ServerCreateDto);
    expect(order.create_servers[0].profile!.metadata).toBe(metadata);
    expect(Object.keys(order.create_servers[0].metadata!)).toEqual(['constructor', '__proto__', 'role']);
    expect(order.delete_servers).toEqual([]);
  });

  it('still refuses what the contract refuses, nested messages included', () => {
    expect(() => parseContract(WorkOrderMessage, { ...valid, user: 'u', kind: 'create', create_servers: [{ node_id: 'x' }], build_timeout: 60 })).toThrow(
      /create_servers\.0\.node_id: node_id must be a UUID/,
    );
    expect(() => parseContract(WorkOrderMessage, { ...valid, user: 'u', kind: 'create', create_servers: 'x', build_timeout: 60 })).toThrow(ContractViolation);
  });

  it('refuses lists where objects belong, which ValidateNested alone took (found by the fuzz suite)', () => {
    const server = { node_id: valid.action_id, name: 'n', index: 0, placement: {}, profile: {} };
    const order = (fields: object) => ({ ...valid, user: 'u', kind: 'create', build_timeout: 60, ...fields });
    expect(() => parseContract(WorkOrderMessage, order({ create_servers: [server] }))).not.toThrow();
    expect(() => parseContract(WorkOrderMessage, order({ create_servers: [{ ...server, placement: [] }] }))).toThrow(/create_servers\.0\.placement: placement must be an object/);
    expect(() => parseContract(WorkOrderMessage, order({ create_servers: [[]] }))).toThrow(/create_servers: each value in create_servers must be an object/);
    const result = { ...valid, outcome: 'SUCCEEDED', reason: 'ok', groups: {} };
    expect(() => parseContract(WorkResultMessage, { ...result, nodes: [] })).not.toThrow();
    expect(() => parseContract(WorkResultMessage, { ...result, nodes: [[]] })).toThrow(/nodes: each value in nodes must be an object/);
  });

  it('applies the rules whatever a message says its constructor is (a top-level "constructor" threw or skipped every rule; found by the fuzz suite)', () => {
    for (const constructor of [null, 'x', {}, 1]) {
      expect(() => parseContract(ActionRequestedMessage, { ...valid, schema_version: 1.5, constructor })).toThrow(/schema_version/);
      expect(() => parseContract(ActionRequestedMessage, { ...valid, message_id: 'x', constructor })).toThrow(/message_id must be a UUID/);
      expect(parseContract(ActionRequestedMessage, { ...valid, constructor })).toBeInstanceOf(ActionRequestedMessage);
    }
  });
});
