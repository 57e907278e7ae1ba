import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ApiClient, keystoneToken } from '../support/api-client';
import { ARTIFACTS, collectErrors, launchChromium, screenshot } from '../support/browser';
import { act, createPolicy, demoApi } from '../support/placement.scenario';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * The web page at /ui in a real Chromium against the embedded default, as an operator uses it: sign
 * in as demo with the keyboard, read the clusters, dry-run a scale-out, run it and watch it, read
 * the placement map and the decision, find drift and repair it; on a 390 px phone; and as another
 * project, which sees none of it. Screenshots of each step: test-artifacts/ui/.
 */
describe('the web page in a real browser (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let web: string;

  const sim = async (path: string, body: unknown) => {
    const res = await fetch(`${t.trellis.simulator!.url}/_sim${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`simulator ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const text = async (selector: string) => (await page.locator(selector).innerText()).replace(/\s+/g, ' ');

  /** every control has a name a screen reader says, nothing jumps the tab order */
  const expectLabelledControls = async () => {
    const unlabelled = await page.evaluate(() => [
      ...[...document.querySelectorAll('input, select, textarea')].filter((e) => !(e as HTMLInputElement).labels?.length && !e.getAttribute('aria-label')).map((e) => e.outerHTML),
      ...[...document.querySelectorAll('button, a[href]')].filter((e) => !(e.textContent ?? '').trim()).map((e) => e.outerHTML),
      ...[...document.querySelectorAll('[tabindex]')].filter((e) => Number(e.getAttribute('tabindex')) > 0).map((e) => e.outerHTML),
    ]);
    expect(unlabelled).toEqual([]);
  };

  beforeAll(async () => {
    t = await startTestTrellis();
    api = await demoApi(t.trellis);
    web = (await createProfileAndCluster(api, 'web')).clusterId;
    await createPolicy(api, 'zones', { type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: 'az1', weight: 200 }, { name: 'az2', weight: 100 }] } });
    expect((await act(api, 'web', { policy_attach: { policy_id: 'zones' } })).status).toBe('SUCCEEDED');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(20_000);
    errors = collectErrors(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in as demo with the keyboard alone, through the Keystone Trellis uses', async () => {
    await page.goto(`${t.trellis.url}/ui`);
    expect(page.url()).toBe(`${t.trellis.url}/ui/`);
    await expectLabelledControls();
    await screenshot(page, '01-sign-in');
    // the user name field has the focus; the domain is filled in
    await page.keyboard.type('demo');
    await page.keyboard.press('Tab');
    await page.keyboard.type('demo');
    await page.keyboard.press('Tab');
    await page.keyboard.type('demo');
    await page.keyboard.press('Enter');
    await page.locator('#who', { hasText: 'demo in project demo' }).waitFor();
    expect(await text('#who')).toBe('demo in project demo (member, reader)');
  });

  it("lists the project's clusters with status, size and attached policies", async () => {
    const row = page.locator('tr[data-cluster="web"]');
    await row.waitFor();
    expect(await row.innerText()).toMatch(/web\s+ACTIVE\s+0 nodes \(desired 0, min 0, max unlimited\)\s+zones \(zone placement 1\.0\)/);
    await screenshot(page, '02-clusters');
    await row.getByRole('link', { name: 'web' }).click();
    await page.getByRole('heading', { name: 'Cluster web' }).waitFor();
  });

  it('shows the plan of a scale-out dry run, and nothing runs', async () => {
    await page.getByLabel('Number of nodes').fill('3');
    await page.getByRole('button', { name: 'Preview (dry run)' }).click();
    const preview = page.locator('[data-preview]');
    await preview.waitFor();
    expect(await preview.locator('table.plan tbody tr').allInnerTexts()).toEqual([expect.stringMatching(/^node-\S+\taz1\tnone$/), expect.stringMatching(/^node-\S+\taz1\tnone$/), expect.stringMatching(/^node-\S+\taz2\tnone$/)]);
    expect(await text('[data-preview] li[data-policy="zones"]')).toBe('zones (zone placement 1.0) OK create 3: az1 2, az2 1 creation: 3 new node(s) by zone: az1 2, az2 1');
    expect(await text('[data-preview]')).toContain('Desired capacity: 0 → 3');
    await expectLabelledControls();
    await screenshot(page, '03-dry-run');
    // the dry run stored no action and made no node
    expect((await api.get(`/v1/actions?cluster_id=${web}`)).body.actions.map((a: { action: string }) => a.action).sort()).toEqual(['CLUSTER_ATTACH_POLICY', 'CLUSTER_CREATE']);
    expect(await nodesOf(api, web)).toEqual([]);
  });

  it('shows where the keyboard is', async () => {
    await page.getByLabel('Number of nodes').focus();
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const style = getComputedStyle(el);
      return { text: el.textContent, outline: `${style.outlineStyle} ${style.outlineWidth}` };
    });
    expect(focused).toEqual({ text: 'Preview (dry run)', outline: 'solid 3px' });
  });

  it('runs it and shows the progress while the servers build: nodes ACTIVE of nodes planned', async () => {
    // the simulator's servers stay in BUILD until the test moves its clock
    await sim('/config', { build_delay_ms: 600_000 });
    await page.getByRole('button', { name: 'Run: scale out by 3' }).click();
    const running = page.locator('#running li[data-action]');
    await running.filter({ hasText: '0 of 3 new nodes ACTIVE' }).waitFor();
    expect(await running.locator('progress').evaluate((p: HTMLProgressElement) => [p.value, p.max])).toEqual([0, 3]);
    expect(await text('#running')).toMatch(/scale out RUNNING/);
    await screenshot(page, '04-running');
    // the delay back first: a server created between the two calls would otherwise take 600 s more
    await sim('/config', { build_delay_ms: 50 });
    await sim('/clock', { advance_ms: 600_000 });
    await page.locator('#running', { hasText: 'No action is running on this cluster.' }).waitFor();
  });

  it('draws the placement map: zones as columns with their weights beside the counts, hosts as rows, each node with its status', async () => {
    const map = page.locator('#placement table.map');
    await map.locator('li.node[data-status="ACTIVE"]').nth(2).waitFor();
    expect(await text('#placement th[data-zone="az1"]')).toBe('az1 2 nodes (67%) weight 200 (67%): 2 expected');
    expect(await text('#placement th[data-zone="az2"]')).toBe('az2 1 node (33%) weight 100 (33%): 1 expected');
    // every node sits in the column of the zone and the row of the host the API reports for it
    const drawn = await map.evaluate((table: HTMLTableElement) => {
      const zones = [...table.tHead!.rows[0].cells].map((c) => c.getAttribute('data-zone'));
      return [...table.querySelectorAll('li.node')].map((li) => ({
        name: li.getAttribute('data-node'),
        zone: zones[(li.closest('td') as HTMLTableCellElement).cellIndex],
        host: li.closest('tr')!.getAttribute('data-host'),
      }));
    });
    const nodes = await nodesOf(api, web);
    expect(drawn.sort((a, b) => a.name!.localeCompare(b.name!))).toEqual(
      nodes.map((n) => ({ name: n.name, zone: n.data.placement.zone, host: n.data.placement.host })).sort((a, b) => a.name.localeCompare(b.name)),
    );
    // a member sees Nova's hostId, shortened, with the whole of it in the title
    const firstHost = nodes[0].data.placement.host as string;
    expect(firstHost).toMatch(/^[0-9a-f]{56}$/);
    expect(await page.locator(`#placement tr[data-host="${firstHost}"] th`).innerText()).toBe(`${firstHost.slice(0, 8)}…`);
    await page.locator('#placement').screenshot({ path: join(ARTIFACTS, '05-placement-map.png') });
    await screenshot(page, '05-cluster');
  });

  it('opens the decision of the scale-out: the plan and what each policy said and changed', async () => {
    await page.locator('#actions').getByRole('link', { name: 'scale out' }).click();
    await page.getByRole('heading', { name: 'Action scale out' }).waitFor();
    const decision = page.locator('#decision');
    await decision.locator('table.plan').waitFor();
    expect(await text('#decision .outcome')).toBe('OK Completed policy checking.');
    expect(await decision.locator('table.plan tbody tr').count()).toBe(3);
    expect(await text('#decision li[data-policy="zones"]')).toBe('zones (zone placement 1.0) OK create 3: az1 2, az2 1 creation: 3 new node(s) by zone: az1 2, az2 1');
    expect(await text('main')).toContain('SUCCEEDED Cluster scaling succeeded.');
    await expectLabelledControls();
    await screenshot(page, '06-decision');
  });

  it('finds drift, shows the repair before it runs, runs it and shows the timeline', async () => {
    const profile = await api.post('/v1/profiles', {
      profile: { name: 'db-profile', spec: { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [], metadata: { roles: 'db' } } } },
    });
    expect(profile.status).toBe(201);
    const created = await api.post('/v1/clusters', { cluster: { name: 'db', profile_id: 'db-profile', desired_capacity: 0, max_size: -1 } });
    expect((await api.waitForAction(ApiClient.actionIdOf(created))).status).toBe('SUCCEEDED');
    const db = created.body.cluster.id as string;
    await createPolicy(api, 'db-apart', { type: 'trellis.policy.role_anti_affinity', version: 1.0, properties: { roles: ['db'] } });
    await createPolicy(api, 'even', { type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: 'az1' }, { name: 'az2' }] } });
    expect((await act(api, 'db', { policy_attach: { policy_id: 'db-apart' } })).status).toBe('SUCCEEDED');
    expect((await act(api, 'db', { policy_attach: { policy_id: 'even' } })).status).toBe('SUCCEEDED');
    expect((await act(api, 'db', { scale_out: { count: 4 } })).status).toBe('SUCCEEDED');
    // an evacuation puts a server on the host of another one of its zone
    const state = (await (await fetch(`${t.trellis.simulator!.url}/_sim/state`)).json()) as { servers: Array<{ id: string; host: string; zone: string }> };
    const ours = new Set((await nodesOf(api, db)).map((n) => n.physical_id as string));
    const [first, second] = state.servers.filter((s) => ours.has(s.id) && s.zone === 'az1');
    await sim(`/servers/${second.id}/migrate`, { host: first.host });
    await page.goto(`${t.trellis.url}/ui/#/clusters/${db}`);
    await page.getByRole('heading', { name: 'Cluster db' }).waitFor();
    expect(await text('#placement')).toContain('Server groups: db-aa-1 (anti-affinity, 4 nodes of this cluster)');
    await page.getByRole('button', { name: 'Check now' }).click();
    await page.locator('#drift li[data-kind="hosts_shared"]').waitFor();
    expect(await text('#drift li[data-kind="hosts_shared"]')).toMatch(/^hosts shared \(found .+\): Policy 'db-apart': Nodes .* share the host/);
    await page.getByRole('button', { name: 'Preview repair (dry run)' }).click();
    await page.locator('#drift [data-preview] .replacements li').waitFor();
    expect(await text('#drift [data-preview] .replacements')).toMatch(/^node-\S+ replaces node-\S+ \(hosts_shared\) in az\d, group db-aa-1$/);
    await screenshot(page, '07-repair-dry-run');
    await page.getByRole('button', { name: 'Run: repair' }).click();
    await page.locator('#drift', { hasText: 'No open findings' }).waitFor();
    await page.locator('#events li', { hasText: / REPLACED: Node node-\S+ replaced by node-/ }).waitFor();
    expect(await text('#events')).toContain('DRIFT_RESOLVED');
    // four hosts again, two in each zone, as the weights ask
    await page.locator('#placement tbody tr').nth(3).waitFor();
    expect(await text('#placement th[data-zone="az1"]')).toBe('az1 2 nodes (50%) weight 100 (50%): 2 expected');
    await page.locator('#placement').screenshot({ path: join(ARTIFACTS, '08-placement-map-repaired.png') });
    await screenshot(page, '08-repaired');
  });

  it('is readable on a 390 px phone: nothing is wider than the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${t.trellis.url}/ui/#/clusters/${web}`);
    await page.locator('#placement li.node').first().waitFor();
    await page.locator('#events li').first().waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // the map's columns fit too, without scrolling inside its box
    expect(await page.locator('#placement .scroll').evaluate((e) => e.scrollWidth <= e.clientWidth)).toBe(true);
    await screenshot(page, '09-phone-cluster');
    await page.goto(`${t.trellis.url}/ui/#/`);
    await page.locator('tr[data-cluster="web"]').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, '09-phone-clusters');
  });

  it("shows another project none of demo's clusters (signed in with a pasted token of alt_demo)", async () => {
    const other = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const otherErrors = collectErrors(other);
    try {
      const token = await keystoneToken(t.trellis.simulator!.authUrl, { name: 'alt_demo', password: 'demo', project: 'alt_demo' });
      await other.goto(`${t.trellis.url}/ui/`);
      await other.getByLabel('Token', { exact: true }).fill(token);
      await other.getByRole('button', { name: 'Use this token' }).click();
      await other.locator('#who', { hasText: 'alt_demo in project alt_demo' }).waitFor();
      await other.getByText('This project has no clusters yet.').waitFor();
      await other.goto(`${t.trellis.url}/ui/#/clusters/${web}`);
      await other.getByRole('alert').filter({ hasText: `The cluster '${web}' could not be found.` }).waitFor();
      expect(otherErrors).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('refuses a wrong password with the reason, and signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('User name').fill('demo');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByLabel('Project').fill('demo');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: "Keystone refused user 'demo' in project 'demo'" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it('ran without a script error or a Content-Security-Policy refusal', () => {
    expect(errors).toEqual([]);
  });
});
