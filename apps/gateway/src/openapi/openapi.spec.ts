import { startGatewayHarness, type GatewayHarness } from '../testing/gateway-harness';

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
      ['add_nodes', 'check', 'complete_lifecycle', 'del_nodes', 'policy_attach', 'policy_detach', 'policy_update', 'repair', 'resize', 'scale_in', 'scale_out'],
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
});
