// @ts-check
import { actionIdOf } from './api.js';
import { readDecision } from './decision.js';
import { decisionView } from './decision-view.js';
import { badge, fill, h, section } from './dom.js';
import { actionLabel, plural, policyTypeLabel, UNFINISHED, when } from './format.js';
import { mapView } from './map-view.js';
import { clusterNodes, renderError, update } from './page.js';
import { placementMap } from './placement.js';
import { actionProgress, progressText } from './progress.js';

/**
 * While an action of the cluster runs, the page looks again this often (about seven requests);
 * otherwise every 10 s. The project's request rate (20 a second by default) is shared by its tabs.
 */
const BUSY_MS = 2_000;
const IDLE_MS = 10_000;
const ACTIONS_SHOWN = 10;
const EVENTS_SHOWN = 25;

/**
 * One cluster: its size and policies, the actions running now with their progress, the placement
 * map, a dry-run form for scaling, drift findings with a repair, the last actions with their
 * decisions and the events timeline. Everything is read from /v1 with the person's token.
 * @param {import('./app.js').PageContext} page
 * @param {string} clusterRef the cluster's id (or name)
 */
export function clusterPage(page, clusterRef) {
  const busy = () => h('p', { class: 'quiet' }, 'Loading…');
  const parts = {
    summary: h('div', { 'aria-busy': 'true' }, busy()),
    running: h('div', { 'aria-live': 'polite' }),
    map: h('div', { 'aria-busy': 'true' }, busy()),
    findings: h('div', { 'aria-busy': 'true' }, busy()),
    actions: h('div', { 'aria-busy': 'true' }, busy()),
    events: h('div', { 'aria-busy': 'true' }, busy()),
  };
  const heading = h('h1', { tabindex: -1 }, 'Cluster');
  /** decisions are stored once and never change: fetched once per action */
  /** @type {Map<string, any>} */
  const decisions = new Map();
  /** @type {Map<string, any>} */
  const policies = new Map();
  /** @type {string | null} */
  let clusterId = null;
  let timer = 0;

  const decisionOf = async (/** @type {string} */ actionId) => {
    if (!decisions.has(actionId)) {
      const found = await page.api.getOrNull(`/v1/actions/${actionId}/decision`);
      if (!found) return null;
      decisions.set(actionId, found.decision);
    }
    return decisions.get(actionId);
  };

  const refresh = async () => {
    const mine = ++timer;
    let running = false;
    try {
      const { cluster } = await page.api.get(`/v1/clusters/${encodeURIComponent(clusterRef)}`);
      clusterId = cluster.id;
      const id = cluster.id;
      const [nodes, { cluster_policies: bindings }, { actions }, findings, { events }] = await Promise.all([
        clusterNodes(page.api, id),
        page.api.get(`/v1/clusters/${id}/policies`),
        page.api.get(`/v1/actions?cluster_id=${id}&limit=${ACTIONS_SHOWN}&sort=created_at:desc`),
        page.api.get(`/v1/clusters/${id}/findings`),
        page.api.get(`/v1/events?cluster_id=${id}&limit=${EVENTS_SHOWN}&sort=timestamp:desc`),
      ]);
      for (const b of bindings) if (!policies.has(b.policy_id)) policies.set(b.policy_id, (await page.api.get(`/v1/policies/${b.policy_id}`)).policy);
      const unfinished = actions.filter((/** @type {any} */ a) => UNFINISHED.includes(a.status));
      running = unfinished.length > 0;
      const progress = await Promise.all(unfinished.map(async (/** @type {any} */ a) => ({ action: a, progress: actionProgress(await decisionOf(a.id), nodes) })));
      let latest = null;
      for (const a of actions.filter((/** @type {any} */ a) => !UNFINISHED.includes(a.status)).slice(0, 3)) {
        latest = await decisionOf(a.id);
        if (latest) break;
      }
      if (!page.alive()) return;
      fill(heading, `Cluster ${cluster.name}`);
      document.title = `${cluster.name} · Trellis`;
      update(parts.summary, { cluster, bindings }, ({ cluster, bindings }) => summaryView(cluster, bindings));
      update(parts.running, progress, runningView);
      update(parts.map, { nodes, bindings, latest, ids: [...policies.keys()] }, ({ nodes, bindings, latest }) =>
        mapView(placementMap({ nodes, bindings, policies, decision: latest })),
      );
      update(parts.findings, findings.findings, (list) => findingsView(list));
      update(parts.actions, actions, actionsView);
      update(parts.events, events, eventsView);
    } catch (e) {
      if (page.alive()) renderError(parts.summary, e);
    }
    // a newer refresh (started by an action the person ran) owns the schedule
    if (mine === timer) page.later(running ? BUSY_MS : IDLE_MS, () => mine === timer && refresh());
  };

  const started = (/** @type {string} */ what, /** @type {string} */ actionId) => {
    page.announce(`${what} started (action ${actionId.slice(0, 8)}); progress is shown under "Running now".`);
    void refresh();
  };

  fill(
    page.main,
    h('p', {}, h('a', { href: '#/' }, '← All clusters')),
    heading,
    parts.summary,
    section('running', 'Running now', parts.running),
    section('placement', 'Placement map', parts.map),
    section('operate', 'Scale (dry run first)', scaleForm(page, () => clusterId, started)),
    section('drift', 'Drift findings', parts.findings, repairForm(page, () => clusterId, started)),
    section('actions', 'Last actions', parts.actions),
    section('events', 'Events', parts.events),
  );
  heading.focus();
  void refresh();
}

/** @param {any} cluster @param {any[]} bindings */
function summaryView(cluster, bindings) {
  const max = cluster.max_size === -1 ? 'unlimited' : cluster.max_size;
  return h(
    'div',
    { class: 'summary' },
    h('p', {}, badge(cluster.status), ' ', cluster.status_reason ?? ''),
    h('p', {}, `${plural(cluster.nodes.length, 'node')}: desired ${cluster.desired_capacity}, min ${cluster.min_size}, max ${max}. Profile ${cluster.profile_name}.`),
    h(
      'p',
      {},
      'Policies: ',
      bindings.length
        ? bindings.map((b, i) => [i ? ', ' : '', h('strong', {}, b.policy_name), ` (${policyTypeLabel(b.policy_type)}, priority ${b.priority}${b.enabled ? '' : ', disabled'})`])
        : 'none attached',
    ),
  );
}

/** @param {Array<{action: any, progress: import('./progress.js').Progress}>} running */
function runningView(running) {
  if (!running.length) return h('p', { class: 'quiet' }, 'No action is running on this cluster.');
  return h(
    'ul',
    { class: 'running' },
    running.map(({ action, progress }) => {
      const planned = progress.create + progress.delete;
      const done = progress.active + progress.error + progress.deleted;
      return h(
        'li',
        { 'data-action': action.id },
        h('p', {}, h('a', { href: `#/actions/${action.id}` }, actionLabel(action.action)), ' ', badge(action.status), ' ', action.status_reason ?? ''),
        h('label', { for: `progress-${action.id}` }, progressText(progress)),
        h('progress', { id: `progress-${action.id}`, max: Math.max(planned, 1), value: progress.decided ? done : null }),
      );
    }),
  );
}

/** @param {any[]} findings */
function findingsView(findings) {
  if (!findings.length) return h('p', { class: 'quiet' }, 'No open findings: the cloud matched the policies at the last check.');
  return h(
    'ul',
    { class: 'findings' },
    findings.map((f) => h('li', { 'data-kind': f.kind }, h('strong', {}, f.kind.replace(/_/g, ' ')), ` (found ${when(f.found_at)}): `, f.message)),
  );
}

/** @param {any[]} actions */
function actionsView(actions) {
  if (!actions.length) return h('p', { class: 'quiet' }, 'No actions yet.');
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { class: 'list' },
      h('caption', {}, `The last ${actions.length} actions, newest first`),
      h('thead', {}, h('tr', {}, ['Action', 'Status', 'Started', 'Result'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        {},
        actions.map((a) =>
          h(
            'tr',
            { 'data-action': a.id },
            h('th', { scope: 'row' }, h('a', { href: `#/actions/${a.id}` }, actionLabel(a.action))),
            h('td', {}, badge(a.status)),
            h('td', {}, when(a.created_at)),
            h('td', {}, a.status_reason ?? ''),
          ),
        ),
      ),
    ),
  );
}

/** @param {any[]} events */
function eventsView(events) {
  if (!events.length) return h('p', { class: 'quiet' }, 'No events yet.');
  return h(
    'ol',
    { class: 'timeline' },
    events.map((e) =>
      h(
        'li',
        { class: Number(e.level) >= 30 ? 'warn' : '' },
        h('time', { datetime: e.timestamp }, when(e.timestamp)),
        ' ',
        h('strong', {}, `${e.otype.toLowerCase()} ${e.oname}`),
        ` ${actionLabel(e.action)} ${e.status}: `,
        e.status_reason ?? '',
      ),
    ),
  );
}

/**
 * A dry run's answer with a button to run the same request for real.
 * @param {import('./app.js').PageContext} page
 * @param {string} title
 * @param {any} decision
 * @param {string} runLabel
 * @param {() => Promise<void>} run
 */
function previewView(page, title, decision, runLabel, run) {
  const readable = readDecision(decision);
  const heading = h('h3', { tabindex: -1 }, title);
  const error = h('p', { class: 'error', role: 'alert' });
  const runButton = h('button', { type: 'button', class: 'primary' }, runLabel);
  const discard = h('button', { type: 'button' }, 'Discard');
  const box = h('div', { class: 'preview', 'data-preview': '' }, heading, h('p', { class: 'quiet' }, 'Nothing has run yet: this is what the policies would do now.'), decisionView(readable, 4), error);
  if (readable.status === 'OK') box.append(h('div', { class: 'buttons' }, runButton, discard));
  else box.append(h('div', { class: 'buttons' }, discard));
  runButton.addEventListener('click', async () => {
    runButton.disabled = true;
    try {
      await run();
      box.remove();
    } catch (e) {
      fill(error, e instanceof Error ? e.message : String(e));
      runButton.disabled = false;
    }
  });
  discard.addEventListener('click', () => box.remove());
  queueMicrotask(() => page.alive() && heading.focus());
  return box;
}

/**
 * Scale out or in by a count: the dry run shows the plan, then the same request runs on demand.
 * @param {import('./app.js').PageContext} page
 * @param {() => string | null} clusterId
 * @param {(what: string, actionId: string) => void} started
 */
function scaleForm(page, clusterId, started) {
  const result = h('div', {});
  const form = h(
    'form',
    { class: 'scale' },
    h(
      'fieldset',
      {},
      h('legend', {}, 'Direction'),
      h('label', {}, h('input', { type: 'radio', name: 'kind', value: 'scale_out', checked: true }), ' Scale out (add nodes)'),
      h('label', {}, h('input', { type: 'radio', name: 'kind', value: 'scale_in' }), ' Scale in (remove nodes)'),
    ),
    h('div', { class: 'field' }, h('label', { for: 'scale-count' }, 'Number of nodes'), h('input', { id: 'scale-count', name: 'count', type: 'number', min: 1, value: 1, required: true, inputmode: 'numeric' })),
    h('button', { type: 'submit' }, 'Preview (dry run)'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const id = clusterId();
    if (!id) return;
    const data = new FormData(form);
    const kind = String(data.get('kind'));
    const count = Number(data.get('count'));
    const body = { [kind]: { count } };
    const what = `${kind === 'scale_out' ? 'Scale out' : 'Scale in'} by ${count}`;
    try {
      const { body: dry } = await page.api.post(`/v1/clusters/${id}/actions?dry_run=true`, body);
      fill(
        result,
        previewView(page, `Dry run: ${what.toLowerCase()}`, dry.decision, `Run: ${what.toLowerCase()}`, async () => {
          const { location } = await page.api.post(`/v1/clusters/${id}/actions`, body);
          started(what, actionIdOf(location));
        }),
      );
    } catch (e) {
      renderError(result, e);
    }
  });
  return h('div', {}, form, result);
}

/**
 * Repair the drift the last check found: the dry run lists the replacements, then it runs on demand.
 * @param {import('./app.js').PageContext} page
 * @param {() => string | null} clusterId
 * @param {(what: string, actionId: string) => void} started
 */
function repairForm(page, clusterId, started) {
  const result = h('div', {});
  const check = h('button', { type: 'button' }, 'Check now');
  const preview = h('button', { type: 'button' }, 'Preview repair (dry run)');
  check.addEventListener('click', async () => {
    try {
      const { location } = await page.api.post(`/v1/clusters/${clusterId()}/actions`, { check: {} });
      started('Check', actionIdOf(location));
    } catch (e) {
      renderError(result, e);
    }
  });
  preview.addEventListener('click', async () => {
    const id = clusterId();
    try {
      const { body: dry } = await page.api.post(`/v1/clusters/${id}/actions?dry_run=true`, { repair: {} });
      fill(
        result,
        previewView(page, 'Dry run: repair', dry.decision, 'Run: repair', async () => {
          const { location } = await page.api.post(`/v1/clusters/${id}/actions`, { repair: {} });
          started('Repair', actionIdOf(location));
        }),
      );
    } catch (e) {
      renderError(result, e);
    }
  });
  return h('div', {}, h('div', { class: 'buttons' }, check, preview), result);
}
