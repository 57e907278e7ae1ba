import fc from 'fast-check';
import { ActionUpdateBody, ReplayBody } from '../actions/action.shapes';
import { ClusterActionRequest, ClusterCreateBody, ClusterUpdateBody, ReplaceNodesAction } from '../clusters/cluster.shapes';
import { MAX_API_VERSION } from '../core/api-version';
import { NodeActionRequest, NodeCreateBody, NodeOperationRequest, NodeUpdateBody } from '../nodes/node.shapes';
import { ClusterOperationRequest } from '../clusters/cluster-operation.shapes';
import { PolicyCreateBody, PolicyUpdateBody, PolicyValidateBody } from '../policies/policy.shapes';
import { checkOperationParams } from '../profiles/profile-type';
import { PROFILE_TYPES } from '../profiles/profile-types';
import { ProfileCreateBody, ProfileUpdateBody, ProfileValidateBody } from '../profiles/profile.shapes';
import { ReceiverCreateBody, ReceiverUpdateBody, WebhookTriggerBody, triggerParams } from '../receivers/receiver.shapes';
import { componentSchemas } from '../shapes/components';
import { EnvelopedBody, type Fields, type ObjectBody, type ReadContext } from '../shapes/request';
import { INT4_MAX, isMap, type Json } from '../shared/body';
import { NOVA_PROFILE_SPEC, TOKENS, startGatewayHarness, type GatewayHarness } from '../testing/gateway-harness';
import { arbitrary, violations, type Components, type JsonSchema } from '../testing/json-schema';

type Schema = { $ref?: string; allOf?: Schema[]; properties?: Record<string, Schema>; items?: Schema; required?: string[] };
interface Operation {
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }>; headers?: Record<string, unknown> }>;
  parameters?: Array<{ name: string; in: string; schema?: unknown }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const METHODS = ['get', 'post', 'patch', 'put', 'delete'];
/** The operations whose handlers read a body (they take `@Body()`). */
const TAKES_BODY = new Set([
  'post /v1/profiles',
  'post /v1/profiles/validate',
  'patch /v1/profiles/{profile_id}',
  'post /v1/policies',
  'post /v1/policies/validate',
  'patch /v1/policies/{policy_id}',
  'patch /v1/actions/{action_id}',
  'post /v1/clusters',
  'patch /v1/clusters/{cluster_id}',
  'post /v1/clusters/{cluster_id}/actions',
  'post /v1/clusters/{cluster_id}/ops',
  'post /v1/nodes',
  'patch /v1/nodes/{node_id}',
  'post /v1/nodes/{node_id}/actions',
  'post /v1/nodes/{node_id}/ops',
  'post /v1/actions/{action_id}/replay',
  'post /v1/evaluations',
  'post /v1/receivers',
  'patch /v1/receivers/{receiver_id}',
  'post /v1/webhooks/{webhook_id}/trigger',
]);

describe('the OpenAPI document', () => {
  let h: GatewayHarness;
  let doc: Document;

  beforeAll(async () => {
    h = await startGatewayHarness();
    const res = await h.http().get('/docs-json').expect(200);
    doc = res.body as Document;
  });
  afterAll(() => h?.close());

  const operations = (): Array<[string, Operation]> =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, op]): [string, Operation] => [`${method} ${path}`, op]),
    );

  /** Follows a reference, also in the `allOf: [{$ref}]` form @nestjs/swagger emits for a described property. */
  const resolve = (schema: Schema | undefined): Schema => {
    if (schema?.allOf?.length === 1) return resolve(schema.allOf[0]);
    if (!schema?.$ref) return schema ?? {};
    const name = schema.$ref.replace('#/components/schemas/', '');
    const found = doc.components.schemas[name];
    if (!found) throw new Error(`dangling reference ${schema.$ref}`);
    return found;
  };

  it('documents the Senlin routes', () => {
    const ops = operations().map(([key]) => key);
    expect(ops).toEqual(expect.arrayContaining([...TAKES_BODY, 'get /v1/clusters', 'delete /v1/clusters/{cluster_id}']));
    expect(ops.length).toBeGreaterThan(30);
  });

  it('gives every operation that takes a body a typed JSON request schema, and no other operation one', () => {
    for (const [key, op] of operations()) {
      const schema = op.requestBody?.content?.['application/json']?.schema;
      if (TAKES_BODY.has(key)) {
        expect({ key, properties: resolve(schema).properties !== undefined || op.requestBody?.required === false }).toEqual({
          key,
          properties: true,
        });
      } else {
        expect({ key, requestBody: op.requestBody }).toEqual({ key, requestBody: undefined });
      }
    }
  });

  it('gives every operation a response schema for its success status and the Senlin error body for 400', () => {
    for (const [key, op] of operations()) {
      const success = Object.keys(op.responses).filter((s) => /^2\d\d$/.test(s));
      expect({ key, hasSuccess: success.length > 0 }).toEqual({ key, hasSuccess: true });
      for (const status of success) {
        if (status === '204') continue;
        const schema = op.responses[status].content?.['application/json']?.schema;
        expect({ key, status, typed: schema !== undefined }).toEqual({ key, status, typed: true });
      }
      const error = resolve(op.responses['400']?.content?.['application/json']?.schema);
      expect({ key, error: Object.keys(error.properties ?? {}).sort() }).toEqual({
        key,
        error: ['code', 'error', 'explanation', 'title'],
      });
    }
  });

  it('types the envelopes', () => {
    const list = resolve(doc.paths['/v1/clusters'].get.responses['200'].content?.['application/json']?.schema);
    const cluster = resolve(list.properties?.clusters.items);
    expect(Object.keys(cluster.properties ?? {})).toEqual(
      expect.arrayContaining(['id', 'profile_id', 'desired_capacity', 'min_size', 'max_size', 'status', 'nodes', 'policies']),
    );
    const create = resolve(doc.paths['/v1/clusters'].post.requestBody?.content?.['application/json']?.schema);
    const fields = resolve(create.properties?.cluster);
    expect(fields.required?.sort()).toEqual(['name', 'profile_id']);
    expect(Object.keys(fields.properties ?? {}).sort()).toEqual(
      ['config', 'desired_capacity', 'max_size', 'metadata', 'min_size', 'name', 'profile_id', 'timeout'],
    );
  });

  it('lists every cluster action with its members, and documents dry_run and Location', () => {
    const op = doc.paths['/v1/clusters/{cluster_id}/actions'].post;
    const body = resolve(op.requestBody?.content?.['application/json']?.schema);
    expect(Object.keys(body.properties ?? {}).sort()).toEqual(
      [
        'add_nodes', 'check', 'complete_lifecycle', 'del_nodes', 'policy_attach', 'policy_detach', 'policy_update', 'recover', 'repair',
        'replace_nodes', 'resize', 'scale_in', 'scale_out',
      ],
    );
    expect(Object.keys(resolve(body.properties?.scale_out).properties ?? {})).toEqual(['count']);
    expect(resolve(body.properties?.policy_attach).required).toEqual(['policy_id']);
    expect(Object.keys(resolve(body.properties?.resize).properties ?? {}).sort()).toEqual(
      ['adjustment_type', 'max_size', 'min_size', 'min_step', 'number', 'strict'],
    );
    const accepted = resolve(op.responses['202'].content?.['application/json']?.schema);
    expect(Object.keys(accepted.properties ?? {})).toEqual(['action']);
    expect(op.responses['202'].headers).toHaveProperty('Location');
    expect(op.responses['200']).toBeDefined();
    expect(op.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(
      expect.arrayContaining(['query:dry_run', 'header:OpenStack-API-Version', 'path:cluster_id']),
    );
  });

  it('requires X-Auth-Token through the security scheme', async () => {
    const raw = (await h.http().get('/docs-json').expect(200)).body as {
      security?: unknown;
      components: { securitySchemes?: Record<string, unknown> };
    };
    expect(raw.security).toEqual([{ keystone: [] }]);
    expect(raw.components.securitySchemes?.keystone).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Auth-Token' });
  });

  describe('one source for every shape', () => {
    const components = (): Components => doc.components.schemas as Components;
    /** Senlin's answer to a delete or a cancel: the JSON document null, the one schema written inline. */
    const NULL_DOCUMENT = { type: 'object', nullable: true, example: null };

    it('takes every request and answer schema from the registered shapes, and registers none that no route uses', () => {
      expect(doc.components.schemas).toEqual(componentSchemas());
      const used = new Set<string>();
      const use = (schema: unknown): void => {
        const json = JSON.stringify(schema ?? null);
        for (const [, name] of json.matchAll(/"#\/components\/schemas\/(\w+)"/g)) {
          if (!used.has(name)) {
            used.add(name);
            use(doc.components.schemas[name]);
          }
        }
      };
      for (const [key, op] of operations()) {
        const bodies = [
          ...Object.values(op.requestBody?.content ?? {}).map((c) => ['request', c.schema] as const),
          ...Object.entries(op.responses).flatMap(([status, r]) => Object.values(r.content ?? {}).map((c) => [status, c.schema] as const)),
        ];
        for (const [where, schema] of bodies) {
          const fromShape = schema?.$ref !== undefined || JSON.stringify(schema) === JSON.stringify(NULL_DOCUMENT);
          expect({ key, where, fromShape }).toEqual({ key, where, fromShape: true });
          use(schema);
        }
      }
      expect(Object.keys(doc.components.schemas).filter((name) => !used.has(name))).toEqual([]);
    });

    // every microversion's keys, no bound but int4 on the capacity fields (max_nodes_per_cluster is the deployment's)
    const LATEST: ReadContext = { version: MAX_API_VERSION, maxNodesPerCluster: INT4_MAX };
    const novaServer = PROFILE_TYPES.get('os.nova.server-1.0');
    const tables: Array<EnvelopedBody<Fields> | ObjectBody<Fields>> = [
      ProfileCreateBody, ProfileValidateBody, ProfileUpdateBody, PolicyCreateBody, PolicyValidateBody, PolicyUpdateBody,
      ClusterCreateBody, ClusterUpdateBody, NodeCreateBody, NodeUpdateBody, ReceiverCreateBody, ReceiverUpdateBody, ActionUpdateBody,
      ...Object.values(ClusterActionRequest.members), ...Object.values(NodeActionRequest.members),
    ];
    type Picking = { pick(body: unknown): [string, Json]; members: Record<string, { parse(data: Json, ctx: ReadContext): unknown }> };
    const readOneKey = (shape: Picking) => (body: unknown) => {
      const [key, data] = shape.pick(body);
      return shape.members[key].parse(data, LATEST);
    };
    /** How the gateway reads each documented request body, by component name. */
    const readers: Record<string, (body: unknown) => unknown> = {
      ...Object.fromEntries(tables.map((t) => [t.name, (body: unknown) => t.parse(body as never, LATEST)])),
      [ClusterActionRequest.name]: readOneKey(ClusterActionRequest),
      [NodeActionRequest.name]: readOneKey(NodeActionRequest),
      [ClusterOperationRequest.name]: (body) => {
        const [operation, given] = ClusterOperationRequest.pick(body);
        return ClusterOperationRequest.check(novaServer, 'os.nova.server-1.0', operation, given);
      },
      [NodeOperationRequest.name]: (body) => {
        const [operation, map] = NodeOperationRequest.pick(body);
        return checkOperationParams(novaServer, operation, map[operation]);
      },
      [ReplayBody.name]: (body) => ReplayBody.check(body),
      [WebhookTriggerBody.name]: (body) => triggerParams(body, '2', MAX_API_VERSION),
    };
    /** Bodies the document allows that a reader still refuses, for a reason a schema cannot state. */
    // Senlin's NodeReplaceMapField: the replacements must differ, which JSON schema cannot say of a map's values
    const repeatsReplacement = (action: unknown) =>
      isMap(action) && isMap(action.nodes) && new Set(Object.values(action.nodes)).size < Object.keys(action.nodes).length;
    const refusedAnyway: Record<string, (body: unknown) => boolean> = {
      [ReplaceNodesAction.name]: repeatsReplacement,
      [ClusterActionRequest.name]: (body) => isMap(body) && repeatsReplacement(body.replace_nodes),
    };
    const requestBodies = () =>
      operations().flatMap(([key, op]) => {
        const ref = op.requestBody?.content?.['application/json']?.schema?.$ref;
        return ref ? [[key, ref.replace('#/components/schemas/', '')] as const] : [];
      });

    it('reads every documented request body with the shape that documents it', () => {
      const unread = requestBodies().filter(([, name]) => !(name in readers));
      // evaluate() judges a snapshot (a pre_op one needs an action), not a table
      expect(unread).toEqual([['post /v1/evaluations', 'EvaluationRequest']]);
    });

    it('accepts every body the document allows', () => {
      for (const [name, read] of Object.entries(readers)) {
        const refused = refusedAnyway[name] ?? (() => false);
        fc.assert(
          fc.property(arbitrary({ $ref: `#/components/schemas/${name}` }, components()), (body) => {
            fc.pre(!refused(body));
            expect(() => read(body)).not.toThrow();
          }),
          { numRuns: 40 },
        );
      }
    });

    it('refuses, naming the key, a body without a key the document requires or with one it does not list', () => {
      // the tables that leave their keys to the service (a recover's parameters, a cancel's status) are judged there
      for (const table of tables) {
        const fields = table instanceof EnvelopedBody ? table.inner : table;
        const wrap = (inner: Record<string, unknown>) => (table instanceof EnvelopedBody ? { [table.key]: inner } : inner);
        const schema = components()[fields.name] as JsonSchema;
        if (schema.additionalProperties !== false) continue;
        fc.assert(
          fc.property(arbitrary(schema, components()), (generated) => {
            const inner = generated as Record<string, unknown>;
            for (const needed of schema.required ?? []) {
              const { [needed]: _dropped, ...without } = inner;
              expect(() => table.parse(wrap(without) as never, LATEST)).toThrow(expect.objectContaining({ message: expect.stringContaining(needed) }));
            }
            expect(() => table.parse(wrap({ ...inner, bogus_key: 1 }) as never, LATEST)).toThrow("Additional properties are not allowed ('bogus_key' was unexpected)");
          }),
          { numRuns: 10 },
        );
      }
    });

    it('answers as the document says', async () => {
      const alice = h.as(TOKENS.alice, '1.14');
      const answers: Array<[string, number, unknown]> = [];
      const call = async (key: string, status: number, res: Promise<{ status: number; body: unknown }>) => {
        const { body } = await res;
        answers.push([key, status, body]);
        return body as Record<string, Record<string, unknown>>;
      };
      const profile = await call('post /v1/profiles', 201, alice.post('/v1/profiles', { profile: { name: 'doc-p', spec: NOVA_PROFILE_SPEC } }).expect(201));
      const profileId = profile.profile.id as string;
      await call('get /v1/profiles', 200, alice.get('/v1/profiles').expect(200));
      await call('post /v1/profiles/validate', 200, alice.post('/v1/profiles/validate', { profile: { spec: NOVA_PROFILE_SPEC } }).expect(200));
      const deletion = { type: 'senlin.policy.deletion', version: 1.0, properties: {} };
      await call('post /v1/policies', 201, alice.post('/v1/policies', { policy: { name: 'doc-d', spec: deletion } }).expect(201));
      await call('post /v1/policies/validate', 200, alice.post('/v1/policies/validate', { policy: { spec: deletion } }).expect(200));
      await call('get /v1/policies', 200, alice.get('/v1/policies').expect(200));
      const cluster = await call('post /v1/clusters', 202, alice.post('/v1/clusters', { cluster: { name: 'doc-c', profile_id: profileId } }).expect(202));
      const clusterId = cluster.cluster.id as string;
      await call('get /v1/clusters/{cluster_id}', 200, alice.get(`/v1/clusters/${clusterId}`).expect(200));
      await call('get /v1/clusters', 200, alice.get('/v1/clusters').expect(200));
      const node = await call('post /v1/nodes', 202, alice.post('/v1/nodes', { node: { name: 'doc-n', profile_id: profileId, cluster_id: clusterId } }).expect(202));
      await call('get /v1/nodes/{node_id}', 200, alice.get(`/v1/nodes/${node.node.id as string}?show_details=true`).expect(200));
      await call('get /v1/nodes', 200, alice.get('/v1/nodes').expect(200));
      await call('get /v1/actions', 200, alice.get('/v1/actions').expect(200));
      const actions = (await alice.get('/v1/actions').expect(200)).body as { actions: Array<{ id: string }> };
      await call('get /v1/actions/{action_id}', 200, alice.get(`/v1/actions/${actions.actions[0].id}`).expect(200));
      await call('get /v1/clusters/{cluster_id}/attrs/{path}', 200, alice.get(`/v1/clusters/${clusterId}/attrs/status`).expect(200));
      await call('get /v1/clusters/{cluster_id}/policies', 200, alice.get(`/v1/clusters/${clusterId}/policies`).expect(200));
      await call('get /v1/clusters/{cluster_id}/findings', 200, alice.get(`/v1/clusters/${clusterId}/findings`).expect(200));
      await call('get /v1/events', 200, alice.get('/v1/events').expect(200));
      await call('post /v1/receivers', 201, alice.post('/v1/receivers', { receiver: { name: 'doc-r', type: 'webhook', cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT' } }).expect(201));
      await call('get /v1/receivers', 200, alice.get('/v1/receivers').expect(200));
      await call('get /v1/profile-types', 200, alice.get('/v1/profile-types').expect(200));
      await call('get /v1/profile-types', 200, h.as(TOKENS.alice).get('/v1/profile-types').expect(200));
      await call('get /v1/profile-types/{type_name}', 200, alice.get('/v1/profile-types/os.nova.server-1.0').expect(200));
      await call('get /v1/profile-types/{type_name}/ops', 200, alice.get('/v1/profile-types/os.nova.server-1.0/ops').expect(200));
      await call('get /v1/policy-types', 200, alice.get('/v1/policy-types').expect(200));
      await call('get /v1/policy-types/{type_name}', 200, alice.get('/v1/policy-types/senlin.policy.deletion-1.1').expect(200));
      await call('get /v1/build-info', 200, alice.get('/v1/build-info').expect(200));
      await call('get /v1/services', 200, h.as(TOKENS.admin, '1.14').get('/v1/services').expect(200));
      await call('get /v1/clusters/{cluster_id}', 404, alice.get('/v1/clusters/no-such-cluster').expect(404));
      await call('post /v1/clusters', 400, alice.post('/v1/clusters', { cluster: { name: 'x' } }).expect(400));

      expect(answers.length).toBeGreaterThan(25);
      for (const [key, status, body] of answers) {
        const [method, path] = key.split(' ');
        const schema = doc.paths[path]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema;
        expect({ key, status, documented: schema !== undefined }).toEqual({ key, status, documented: true });
        expect({ key, status, violations: violations(schema as JsonSchema, body, components()) }).toEqual({ key, status, violations: [] });
      }
    });
  });
});
