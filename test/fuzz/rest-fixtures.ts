import type { Embedded } from '../../cli/embedded';
import { ApiClient, keystoneToken } from '../support/api-client';
import { zoneSpec } from '../support/placement.scenario';

/**
 * Real objects for the REST fuzzer to aim at, so that a fuzzed request with a real id gets past the
 * lookup into the handler. A generated case names a fixture symbolically (a FixtureRef); it is
 * resolved when the request is sent, and `ensure()` replaces what a fuzzed DELETE or PATCH took
 * away, so the fuzzer keeps reaching the handlers for the whole run.
 */

export type FixtureKind = 'profile' | 'policy' | 'cluster' | 'node' | 'action' | 'event' | 'receiver';
export type Caller = 'demo' | 'admin' | 'viewer' | 'alt';

export class FixtureRef {
  constructor(
    readonly kind: FixtureKind,
    /** how the object is named: id, name, or Senlin's short id (the id's first 8 characters) */
    readonly form: 'id' | 'name' | 'short',
  ) {}
}

/** A caller's token, resolved when the request is sent. */
export class TokenRef {
  constructor(readonly caller: Caller) {}
}

interface Known {
  id: string;
  name: string;
}

const PROFILE_SPEC = { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [] } };

export class RestFixtures {
  private readonly known = new Map<FixtureKind, Known>();
  private generation = 0;

  private constructor(
    readonly api: ApiClient,
    readonly tokens: Record<Caller, string>,
  ) {}

  static async create(trellis: Embedded): Promise<RestFixtures> {
    const login = (name: string, project: string) => keystoneToken(trellis.simulator!.authUrl, { name, password: name === 'admin' ? 'admin' : 'demo', project });
    const tokens: Record<Caller, string> = {
      demo: await login('demo', 'demo'),
      admin: await login('admin', 'admin'),
      viewer: await login('viewer', 'demo'),
      alt: await login('alt_demo', 'alt_demo'),
    };
    const fixtures = new RestFixtures(new ApiClient(trellis.url, tokens.demo), tokens);
    await fixtures.ensure();
    return fixtures;
  }

  /** A valid body for creating objects in the fuzz bodies' templates (rest-cases.ts). */
  static readonly profileSpec = PROFILE_SPEC;

  resolve(ref: FixtureRef): string {
    const known = this.known.get(ref.kind);
    if (!known) return `no-${ref.kind}`;
    return ref.form === 'id' ? known.id : ref.form === 'name' ? known.name : known.id.slice(0, 8);
  }

  token(ref: TokenRef): string {
    return this.tokens[ref.caller];
  }

  /** Makes sure each fixture exists (re-reading names a PATCH may have changed), creating what is gone. */
  async ensure(): Promise<void> {
    const suffix = () => `${++this.generation}`;
    await this.keep('profile', '/v1/profiles', 'profile', async () =>
      this.created(await this.api.post('/v1/profiles', { profile: { name: `fz-profile-${suffix()}`, spec: PROFILE_SPEC } }), 'profile'),
    );
    await this.keep('policy', '/v1/policies', 'policy', async () =>
      this.created(await this.api.post('/v1/policies', { policy: { name: `fz-zones-${suffix()}`, spec: zoneSpec } }), 'policy'),
    );
    await this.keep('cluster', '/v1/clusters', 'cluster', async () =>
      this.created(
        await this.api.post('/v1/clusters', {
          cluster: { name: `fz-cluster-${suffix()}`, profile_id: this.resolve(new FixtureRef('profile', 'id')), desired_capacity: 1, max_size: 3 },
        }),
        'cluster',
      ),
    );
    await this.keep('node', '/v1/nodes', 'node', async () =>
      this.created(await this.api.post('/v1/nodes', { node: { name: `fz-node-${suffix()}`, profile_id: this.resolve(new FixtureRef('profile', 'id')) } }), 'node'),
    );
    await this.keep('receiver', '/v1/receivers', 'receiver', async () =>
      this.created(
        await this.api.post('/v1/receivers', {
          receiver: {
            name: `fz-hook-${suffix()}`,
            type: 'webhook',
            cluster_id: this.resolve(new FixtureRef('cluster', 'id')),
            action: 'CLUSTER_SCALE_OUT',
            params: { count: 1 },
          },
        }),
        'receiver',
      ),
    );
    await this.latest('action', '/v1/actions?limit=1&sort=created_at:desc', 'actions');
    await this.latest('event', '/v1/events?limit=1&sort=timestamp:desc', 'events');
  }

  private async keep(kind: FixtureKind, collection: string, key: string, create: () => Promise<Known | null>): Promise<void> {
    const current = this.known.get(kind);
    if (current) {
      const res = await this.api.get(`${collection}/${current.id}`);
      const object = res.status === 200 ? res.body[key] : null;
      if (object && !['DELETING', 'ERROR'].includes(object.status)) {
        this.known.set(kind, { id: object.id, name: object.name });
        return;
      }
    }
    const made = await create();
    if (made) this.known.set(kind, made);
  }

  /** the object a create answered with; null when it was refused (the old reference stays, pointing at nothing) */
  private created(res: { status: number; body: any }, key: string): Known | null {
    const object = res.status < 300 ? res.body?.[key] : null;
    return object ? { id: object.id, name: object.name } : null;
  }

  private async latest(kind: FixtureKind, list: string, key: string): Promise<void> {
    const res = await this.api.get(list);
    const first = res.status === 200 ? res.body[key]?.[0] : undefined;
    if (first) this.known.set(kind, { id: first.id, name: first.name ?? first.id });
  }
}
