import type { Logger } from '@trellis/common';
import { startGatewayHarness, TOKENS, type GatewayHarness } from './testing/gateway-harness';

const BAD_REQUEST_EXPLANATION =
  'The server could not comply with the request since it is either malformed or otherwise incorrect.';

function recordingLogger(lines: Array<{ msg: string; fields?: Record<string, unknown> }>): Logger {
  const log = (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, fields });
  const logger: Logger = { debug: () => undefined, info: log, warn: log, error: log, child: () => logger };
  return logger;
}

describe('gateway foundations', () => {
  let h: GatewayHarness;
  const logs: Array<{ msg: string; fields?: Record<string, unknown> }> = [];

  beforeAll(async () => {
    h = await startGatewayHarness({ logger: recordingLogger(logs) });
  });
  afterAll(() => h?.close());

  describe('version discovery', () => {
    it('answers GET / and /versions with 300 and one 1.0 entry advertising 1.14, without a token', async () => {
      for (const path of ['/', '/versions']) {
        const res = await h.http().get(path).set('Host', 'cloud.example:8777');
        expect(res.status).toBe(300);
        expect(res.body.versions).toHaveLength(1);
        expect(res.body.versions[0]).toEqual({
          id: '1.0',
          status: 'CURRENT',
          updated: '2016-01-18T00:00:00Z',
          'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.clustering-v1+json' }],
          links: [
            { href: 'http://cloud.example:8777/v1', rel: 'self' },
            { rel: 'help', href: 'https://docs.openstack.org/api-ref/clustering' },
          ],
          min_version: '1.0',
          max_version: '1.14',
        });
      }
    });

    it('answers GET /v1 with 200 and the version object', async () => {
      const res = await h.http().get('/v1');
      expect(res.status).toBe(200);
      expect(res.body.version.id).toBe('1.0');
      expect(res.body.version.links[0].href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    });

    it('serialises keys sorted, as Senlin did', async () => {
      const res = await h.http().get('/v1');
      expect(res.text.indexOf('"id"')).toBeLessThan(res.text.indexOf('"links"'));
      expect(res.text.indexOf('"links"')).toBeLessThan(res.text.indexOf('"max_version"'));
      expect(res.text.indexOf('"max_version"')).toBeLessThan(res.text.indexOf('"media-types"'));
    });
  });

  describe('TRELLIS_PUBLIC_URL', () => {
    let other: GatewayHarness;
    beforeAll(async () => {
      other = await startGatewayHarness({ env: { TRELLIS_PUBLIC_URL: 'https://api.example.com/cluster/' } });
    });
    afterAll(() => other?.close());

    it('builds hrefs and Location headers from it', async () => {
      const res = await other.http().get('/');
      expect(res.body.versions[0].links[0].href).toBe('https://api.example.com/cluster/v1');
    });
  });

  describe('microversions', () => {
    it('defaults to 1.0 and echoes the version with Vary', async () => {
      const res = await h.as(TOKENS.alice).get('/v1/clusters');
      expect(res.status).toBe(200);
      expect(res.headers['openstack-api-version']).toBe('clustering 1.0');
      expect(res.headers.vary).toContain('OpenStack-API-Version');
    });

    it('accepts a version among other services and latest', async () => {
      const res = await h.as(TOKENS.alice).get('/v1/clusters').set('OpenStack-API-Version', 'compute 2.1, clustering 1.12');
      expect(res.headers['openstack-api-version']).toBe('clustering 1.12');
      const latest = await h.as(TOKENS.alice, 'latest').get('/v1/clusters');
      expect(latest.headers['openstack-api-version']).toBe('clustering 1.14');
    });

    it('accepts the version in the Accept media type', async () => {
      const res = await h.as(TOKENS.alice).get('/v1/clusters').set('Accept', 'application/vnd.openstack.clustering-v1.5');
      expect(res.headers['openstack-api-version']).toBe('clustering 1.5');
    });

    it('refuses a malformed version with 400', async () => {
      const res = await h.as(TOKENS.alice, '1.x').get('/v1/clusters');
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe("API Version String '1.x' is of invalid format. It must be of format 'major.minor'.");
    });

    it('refuses a version outside 1.0-1.14 with 406', async () => {
      const res = await h.as(TOKENS.alice, '1.15').get('/v1/clusters');
      expect(res.status).toBe(406);
      expect(res.body).toEqual({
        code: 406,
        title: 'Not Acceptable',
        explanation: BAD_REQUEST_EXPLANATION,
        error: {
          code: 406,
          message: "Version '1.15' is not supported by the API. Minimum is '1.0' and maximum is '1.14'.",
          type: 'InvalidGlobalAPIVersion',
        },
      });
    });

    it('refuses a method gated above the requested version', async () => {
      const res = await h.as(TOKENS.alice, '1.1').post('/v1/profiles/validate', { profile: { spec: {} } });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe("API version '1.1' is not supported on this method.");
    });
  });

  describe('authentication', () => {
    it('answers 401 with the Senlin body without a token', async () => {
      const res = await h.http().get('/v1/clusters');
      expect(res.status).toBe(401);
      expect(res.body.code).toBe(401);
      expect(res.body.title).toBe('Unauthorized');
      expect(res.body.error).toEqual({
        code: 401,
        message: 'The request you have made requires authentication.',
        type: 'HTTPUnauthorized',
      });
    });

    it('answers 401 for a token Keystone does not know', async () => {
      const res = await h.as('bogus').get('/v1/profiles');
      expect(res.status).toBe(401);
    });

    it('refuses global_project=true to a member with 403 and allows it to an admin', async () => {
      const res = await h.as(TOKENS.alice).get('/v1/clusters?global_project=true');
      expect(res.status).toBe(403);
      expect(res.body.title).toBe('Forbidden');
      expect(res.body.explanation).toBe('Access was denied to this resource.');
      expect(res.body.error.message).toBe('You are not authorized to complete this operation.');
      const admin = await h.as(TOKENS.admin).get('/v1/clusters?global_project=true');
      expect(admin.status).toBe(200);
    });

    it('rejects a global_project value that is not a boolean', async () => {
      const res = await h.as(TOKENS.admin).get('/v1/clusters?global_project=maybe');
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe("Invalid value 'maybe' specified for 'global_project'");
    });
  });

  describe('error bodies', () => {
    it('gives every request an X-Openstack-Request-Id', async () => {
      const a = await h.http().get('/');
      const b = await h.as(TOKENS.alice).get('/v1/nope');
      expect(a.headers['x-openstack-request-id']).toMatch(/^req-[0-9a-f-]{36}$/);
      expect(b.headers['x-openstack-request-id']).toMatch(/^req-[0-9a-f-]{36}$/);
      expect(a.headers['x-openstack-request-id']).not.toBe(b.headers['x-openstack-request-id']);
    });

    it('answers an unknown route with a Senlin 404', async () => {
      const res = await h.as(TOKENS.alice).get('/v1/nope');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        code: 404,
        title: 'Not Found',
        explanation: 'The resource could not be found.',
        error: { code: 404, message: 'The resource could not be found.', type: 'HTTPNotFound' },
      });
    });

    it('answers malformed JSON with a Senlin 400', async () => {
      const res = await h
        .as(TOKENS.alice)
        .post('/v1/clusters')
        .set('Content-Type', 'application/json')
        .send('{"cluster": ');
      expect(res.status).toBe(400);
      expect(res.body.title).toBe('Bad Request');
      expect(res.body.explanation).toBe(BAD_REQUEST_EXPLANATION);
      expect(res.body.error.type).toBe('HTTPBadRequest');
      expect(res.body.error.message).toMatch(/^Malformed request body: /);
      expect(res.headers['x-openstack-request-id']).toMatch(/^req-/);
    });

    it('reads a body sent without a JSON content type as JSON', async () => {
      const res = await h.as(TOKENS.alice).post('/v1/clusters').set('Content-Type', 'text/plain').send('{"cluster": {}}');
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe("'name' is a required property");
    });

    it('answers an unexpected failure with a 500 carrying an error id that is logged, never a stack', async () => {
      const original = h.db.dataSource.manager.getRepository;
      // A broken database makes the list fail in a way no domain code expects.
      const spy = jest.spyOn(h.db.dataSource.manager, 'getRepository').mockImplementation(() => {
        throw new TypeError('database exploded');
      });
      try {
        const res = await h.as(TOKENS.alice).get('/v1/profiles');
        expect(res.status).toBe(500);
        expect(res.body.title).toBe('Internal Server Error');
        const errorId = res.body.error.error_id as string;
        expect(errorId).toMatch(/^[0-9a-f-]{36}$/);
        expect(res.body.error.message).toBe(`An unexpected error occurred (error id ${errorId}).`);
        expect(res.text).not.toContain('database exploded');
        expect(res.text).not.toContain('at ');
        const logged = logs.find((l) => l.fields?.error_id === errorId);
        expect(logged?.fields?.error).toBe('database exploded');
        expect(String(logged?.fields?.stack)).toContain('TypeError');
      } finally {
        spy.mockRestore();
        expect(h.db.dataSource.manager.getRepository).toBe(original);
      }
    });
  });
});
