import { ApiClient, keystoneToken } from '../support/api-client';
import { startTrellisOn, type TrellisOnCloud } from '../support/real-cloud-scenarios';
import { REAL_SCENARIO_CLOUD, assertRealCloudAnswers, realCloudSettings } from './support/real-cloud';

/**
 * Issue 11 against the real Keystone + Nova: NODE_UPDATE and CLUSTER_UPDATE to a new profile,
 * Trellis embedded with the harness's `trellis` service user acting with demo's trust. Nova
 * rebuilds the server from a second image (made here in Glance, public, and deleted afterwards),
 * resizes it to m1.small and confirms, renames it and replaces its metadata.
 */
const PREFIX = 'os-update-';

const cloud = REAL_SCENARIO_CLOUD;

/** Glance as the harness's admin: a public image to rebuild servers from. */
class Glance {
  private constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  static async asAdmin(): Promise<Glance> {
    const admin = realCloudSettings('admin');
    const token = await keystoneToken(admin.authUrl!, { name: admin.username!, password: admin.password!, project: admin.projectName! });
    return new Glance(`http://${new URL(admin.authUrl!).hostname}:9292/v2`, token);
  }

  private call(method: string, path: string, body?: unknown, contentType = 'application/json') {
    return fetch(`${this.url}${path}`, {
      method,
      headers: { 'X-Auth-Token': this.token, ...(body === undefined ? {} : { 'Content-Type': contentType }) },
      body: body === undefined ? undefined : contentType === 'application/json' ? JSON.stringify(body) : (body as Buffer),
    });
  }

  async imagesNamed(name: string): Promise<string[]> {
    const res = await this.call('GET', `/images?name=${encodeURIComponent(name)}`);
    return ((await res.json()) as { images: Array<{ id: string }> }).images.map((i) => i.id);
  }

  async createPublicImage(name: string): Promise<string> {
    const created = await this.call('POST', '/images', { name, disk_format: 'raw', container_format: 'bare', visibility: 'public' });
    if (created.status !== 201) throw new Error(`Glance image create: ${created.status} ${await created.text()}`);
    const { id } = (await created.json()) as { id: string };
    const upload = await this.call('PUT', `/images/${id}/file`, Buffer.alloc(1024), 'application/octet-stream');
    if (upload.status !== 204) throw new Error(`Glance image upload: ${upload.status} ${await upload.text()}`);
    return id;
  }

  async deleteImage(id: string): Promise<void> {
    await this.call('DELETE', `/images/${id}`);
  }
}

describe('node and cluster update to a new profile against the real Keystone + Nova', () => {
  let on: TrellisOnCloud;
  let glance: Glance;
  let imageId: string;
  const altImage = `${PREFIX}image`;

  beforeAll(async () => {
    await assertRealCloudAnswers();
    await cloud.cleanup(PREFIX);
    glance = await Glance.asAdmin();
    for (const stale of await glance.imagesNamed(altImage)) await glance.deleteImage(stale);
    imageId = await glance.createPublicImage(altImage);
    on = await startTrellisOn(cloud, 'trellis');
    const profiles: Array<[string, Record<string, unknown>]> = [
      ['a', { name: `${PREFIX}a` }],
      ['b', { name: `${PREFIX}b`, image: altImage, flavor: 'm1.small', metadata: { tier: 'web' } }],
      ['c', { name: `${PREFIX}c`, flavor: 'm1.small' }],
    ];
    for (const [name, properties] of profiles) {
      const spec = { type: 'os.nova.server', version: 1.0, properties: { flavor: cloud.flavor, image: cloud.image, networks: [], ...properties } };
      const res = await on.api.post('/v1/profiles', { profile: { name: `${PREFIX}${name}`, spec } });
      if (res.status !== 201) throw new Error(`profile ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }, 300_000);

  afterAll(async () => {
    await on?.close();
    await cloud.cleanup(PREFIX);
    if (imageId) await glance.deleteImage(imageId);
  }, 300_000);

  async function finished(res: { status: number; headers: Headers; body: any }) {
    if (res.status !== 202) throw new Error(`expected 202, got ${res.status} ${JSON.stringify(res.body)}`);
    return on.api.waitForAction(ApiClient.actionIdOf(res), cloud.actionTimeoutMs);
  }
  const profileId = async (name: string) => (await on.api.get(`/v1/profiles/${PREFIX}${name}`)).body.profile.id as string;

  it('updates a node to a new profile: Nova rebuilds from the new image, resizes to m1.small, renames and tags the server', async () => {
    const created = await on.api.post('/v1/nodes', { node: { name: `${PREFIX}node`, profile_id: `${PREFIX}a` } });
    expect((await finished(created)).status).toBe('SUCCEEDED');
    const node = (await on.api.get(`/v1/nodes/${created.body.node.id}`)).body.node;

    const started = Date.now();
    const done = await finished(await on.api.call('PATCH', `/v1/nodes/${node.id}`, { node: { profile_id: `${PREFIX}b` } }));
    console.log(`NODE_UPDATE (rebuild + resize + confirm + rename + metadata) on the real cloud: ${Date.now() - started} ms`);
    expect(done).toMatchObject({ status: 'SUCCEEDED', status_reason: 'Node updated successfully.' });
    expect((await on.api.get(`/v1/nodes/${node.id}`)).body.node).toMatchObject({
      profile_id: await profileId('b'), status: 'ACTIVE', status_reason: 'Update succeeded', physical_id: node.physical_id,
    });
    const server = await on.adminNova.getServer(node.physical_id);
    expect(server).toMatchObject({ name: `${PREFIX}b`, status: 'ACTIVE', imageId, flavor: { name: 'm1.small' } });
    expect(server!.metadata).toMatchObject({ tier: 'web', trellis_node: node.id });
  });

  it('updates every node of a cluster to the new profile, then the cluster', async () => {
    const created = await on.api.post('/v1/clusters', { cluster: { name: `${PREFIX}cluster`, profile_id: `${PREFIX}a`, desired_capacity: 2, min_size: 0, max_size: -1 } });
    expect((await finished(created)).status).toBe('SUCCEEDED');
    const clusterId = created.body.cluster.id as string;

    const started = Date.now();
    const done = await finished(await on.api.call('PATCH', `/v1/clusters/${clusterId}`, { cluster: { profile_id: `${PREFIX}c` } }));
    console.log(`CLUSTER_UPDATE of 2 nodes (resize + confirm + rename each) on the real cloud: ${Date.now() - started} ms`);
    expect(done).toMatchObject({ status: 'SUCCEEDED', status_reason: 'Cluster update completed.' });
    expect((await on.api.get(`/v1/clusters/${clusterId}`)).body.cluster).toMatchObject({ profile_id: await profileId('c'), status: 'ACTIVE' });
    const nodes = (await on.api.get(`/v1/nodes?cluster_id=${clusterId}`)).body.nodes as Array<Record<string, any>>;
    expect(nodes.map((n) => n.profile_id)).toEqual([await profileId('c'), await profileId('c')]);
    for (const n of nodes) {
      expect(await on.adminNova.getServer(n.physical_id)).toMatchObject({ name: `${PREFIX}c`, status: 'ACTIVE', flavor: { name: 'm1.small' } });
    }
  });
});
