// @ts-check
import { readDecision } from './decision.js';
import { decisionView } from './decision-view.js';
import { badge, fill, h, section } from './dom.js';
import { actionLabel, UNFINISHED, when } from './format.js';
import { clusterNodes, renderError, update } from './page.js';
import { actionProgress, progressText } from './progress.js';

const POLL_MS = 1_000;

/**
 * One action: what was asked, its status (followed live while it runs, with the nodes ACTIVE of
 * those planned) and its decision: the plan and what each policy said and changed.
 * @param {import('./app.js').PageContext} page
 * @param {string} actionId
 */
export function actionPage(page, actionId) {
  const heading = h('h1', { tabindex: -1 }, 'Action');
  const back = h('p', {}, h('a', { href: '#/' }, '← All clusters'));
  const status = h('div', { 'aria-live': 'polite', 'aria-busy': 'true' }, h('p', { class: 'quiet' }, 'Loading…'));
  const decisionPart = h('div', { 'aria-busy': 'true' });
  /** @type {any} */
  let decision = null;

  const load = async () => {
    let finished = false;
    try {
      const { action } = await page.api.get(`/v1/actions/${encodeURIComponent(actionId)}`);
      decision ??= (await page.api.getOrNull(`/v1/actions/${action.id}/decision`))?.decision ?? null;
      const nodes = action.cluster_id ? await clusterNodes(page.api, action.cluster_id) : [];
      if (!page.alive()) return;
      finished = !UNFINISHED.includes(action.status);
      fill(heading, `Action ${actionLabel(action.action)}`);
      if (action.cluster_id) fill(back, h('a', { href: `#/clusters/${action.cluster_id}` }, '← The cluster'));
      update(status, { action, progress: actionProgress(decision, nodes), finished }, statusView);
      update(decisionPart, { decision, finished }, ({ decision, finished }) =>
        decision
          ? decisionView(readDecision(decision))
          : h('p', { class: 'quiet' }, finished ? 'No decision is stored for this action: it did not run the policy chain.' : 'The policy engine has not decided yet.'),
      );
    } catch (e) {
      if (page.alive()) renderError(status, e);
      finished = true;
    }
    if (!finished) page.later(POLL_MS, load);
  };

  fill(page.main, back, heading, status, section('decision', 'Decision', decisionPart));
  heading.focus();
  void load();
}

/** @param {{action: any, progress: import('./progress.js').Progress, finished: boolean}} state */
function statusView({ action, progress, finished }) {
  const planned = progress.create + progress.delete;
  const inputs = Object.entries(action.inputs ?? {}).map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(', ');
  return h(
    'div',
    { class: 'summary' },
    h('p', {}, badge(action.status), ' ', action.status_reason ?? ''),
    h('p', {}, `Asked ${when(action.created_at)}${inputs ? ` with ${inputs}` : ''}. Action ${action.id}.`),
    progress.decided && planned
      ? h(
          'p',
          {},
          h('label', { for: 'action-progress' }, progressText(progress)),
          ' ',
          h('progress', { id: 'action-progress', max: planned, value: progress.active + progress.error + progress.deleted }),
        )
      : finished
        ? null
        : h('p', {}, h('label', { for: 'action-progress' }, progressText(progress)), ' ', h('progress', { id: 'action-progress' })),
  );
}
