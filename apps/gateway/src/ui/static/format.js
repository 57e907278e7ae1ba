// @ts-check
/** Small text helpers shared by the views. */

const HOST_ID = /^[0-9a-f]{56}$/;

/**
 * A host as the API gave it: a name for an admin, Nova's hostId (a per-project sha224) for a member,
 * shortened so that a row stays readable (the full value goes in the title).
 * @param {string} host
 */
export function hostLabel(host) {
  if (!host) return 'no host yet';
  return isHostId(host) ? `${host.slice(0, 8)}…` : host;
}

/** @param {string} host */
export const isHostId = (host) => HOST_ID.test(host);

/**
 * `2026-11-26T14:24:22Z` → the local time, with the date when it is not today.
 * @param {string | null | undefined} iso
 */
export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
  return d.toDateString() === new Date().toDateString() ? time : `${d.toLocaleDateString()} ${time}`;
}

/** @param {number} n @param {string} one @param {string} [many] */
export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** `senlin.policy.zone_placement-1.0` → `zone placement 1.0` */
export function policyTypeLabel(/** @type {string} */ type) {
  const m = /^(?:senlin|trellis)\.policy\.([a-z_]+)-(.+)$/.exec(type);
  return m ? `${m[1].replace(/_/g, ' ')} ${m[2]}` : type;
}

/** `CLUSTER_SCALE_OUT` → `scale out` */
export function actionLabel(/** @type {string} */ action) {
  return action.replace(/^(CLUSTER|NODE)_/, '').toLowerCase().replace(/_/g, ' ');
}

/** the statuses of an action that has not ended */
export const UNFINISHED = ['INIT', 'WAITING', 'READY', 'RUNNING', 'WAITING_LIFECYCLE_COMPLETION', 'SUSPENDED'];
