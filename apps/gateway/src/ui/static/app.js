// @ts-check
import { actionPage } from './action-page.js';
import { apiWith } from './api.js';
import { clusterPage } from './cluster-page.js';
import { clustersPage } from './clusters-page.js';
import { fill, h } from './dom.js';
import { signInPage, whoIs } from './sign-in.js';

/**
 * The page's frame: the session (a Keystone token in sessionStorage: gone when the tab closes),
 * the header, and the routes `#/` (clusters), `#/clusters/<id>` and `#/actions/<id>`. Each route
 * renders into <main> and may poll; the previous one stops when the route changes.
 */

const TOKEN_KEY = 'trellis.token';
const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const whoEl = /** @type {HTMLElement} */ (document.getElementById('who'));
const signOutButton = /** @type {HTMLButtonElement} */ (document.getElementById('sign-out'));
const live = /** @type {HTMLElement} */ (document.getElementById('announce'));

/**
 * @typedef {{
 *   api: import('./api.js').Api,
 *   who: import('./sign-in.js').Who,
 *   main: HTMLElement,
 *   announce: (message: string) => void,
 *   alive: () => boolean,
 *   later: (ms: number, fn: () => unknown) => void,
 * }} PageContext
 */

let generation = 0;
/** @type {import('./sign-in.js').Who | null} */
let who = null;

/** @param {string} [message] */
function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  who = null;
  generation++;
  fill(whoEl, '');
  signOutButton.hidden = true;
  signInPage(main, { message, signedIn });
}

function signedIn(/** @type {string} */ token, /** @type {import('./sign-in.js').Who} */ person) {
  sessionStorage.setItem(TOKEN_KEY, token);
  who = person;
  const roles = person.roles.length ? person.roles.join(', ') : 'no role';
  fill(whoEl, h('strong', {}, person.user.name), ` in project ${person.project.name || '(none)'} (${roles})`);
  signOutButton.hidden = false;
  if (location.hash === '' || location.hash === '#') location.hash = '#/';
  else route();
}

function route() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token || !who) return;
  const mine = ++generation;
  const context = {
    api: apiWith(token, () => {
      if (mine === generation) signOut('Keystone no longer accepts your token (it expired or was revoked): sign in again.');
    }),
    who,
    main,
    announce: (/** @type {string} */ message) => fill(live, message),
    alive: () => mine === generation,
    later: (/** @type {number} */ ms, /** @type {() => unknown} */ fn) => {
      setTimeout(() => {
        if (mine === generation && !document.hidden) fn();
        else if (mine === generation) document.addEventListener('visibilitychange', () => mine === generation && fn(), { once: true });
      }, ms);
    },
  };
  const [kind, id] = location.hash.replace(/^#\/?/, '').split('/');
  if (kind === 'clusters' && id) clusterPage(context, decodeURIComponent(id));
  else if (kind === 'actions' && id) actionPage(context, decodeURIComponent(id));
  else clustersPage(context);
}

async function start() {
  signOutButton.addEventListener('click', () => signOut());
  window.addEventListener('hashchange', route);
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) return signOut();
  try {
    signedIn(token, await whoIs(token));
  } catch {
    signOut('Your session has ended: sign in again.');
  }
}

void start();
