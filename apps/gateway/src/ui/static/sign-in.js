// @ts-check
import { ApiError, request } from './api.js';
import { fill, h } from './dom.js';

/**
 * @typedef {{user: {id: string, name: string}, project: {id: string, name: string}, roles: string[], expires_at: string, sees_host_names: boolean}} Who
 */

/**
 * The sign-in page: a Keystone user name and password for a project (the gateway asks the Keystone
 * Trellis is configured with, POST /ui/session), or a token pasted from `openstack token issue`.
 * @param {HTMLElement} main
 * @param {{message?: string, signedIn: (token: string, who: Who) => void}} options
 */
export function signInPage(main, { message, signedIn }) {
  const error = h('p', { class: 'error', role: 'alert' }, message ?? '');
  const field = (/** @type {string} */ id, /** @type {string} */ label, /** @type {Record<string, string | boolean>} */ attrs) =>
    h('div', { class: 'field' }, h('label', { for: id }, label), h('input', { id, name: id, required: true, ...attrs }));

  const password = h(
    'form',
    { class: 'card', 'aria-labelledby': 'password-title' },
    h('h2', { id: 'password-title' }, 'With your OpenStack user'),
    field('username', 'User name', { autocomplete: 'username' }),
    field('password', 'Password', { type: 'password', autocomplete: 'current-password' }),
    field('project', 'Project', { autocomplete: 'off' }),
    field('domain', 'Domain', { value: 'Default', autocomplete: 'off' }),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  const pasted = h(
    'form',
    { class: 'card', 'aria-labelledby': 'token-title' },
    h('h2', { id: 'token-title' }, 'Or with a token'),
    h('p', { class: 'quiet' }, 'A project-scoped Keystone token, e.g. from ', h('code', {}, 'openstack token issue'), ' or ', h('code', {}, 'trellis token'), '.'),
    field('token', 'Token', { type: 'password', autocomplete: 'off', spellcheck: 'false' }),
    h('button', { type: 'submit' }, 'Use this token'),
  );

  /** @param {HTMLFormElement} form @param {() => Promise<{token: string, who: Who}>} attempt */
  const onSubmit = (form, attempt) =>
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const button = /** @type {HTMLButtonElement} */ (form.querySelector('button'));
      button.disabled = true;
      fill(error, '');
      try {
        const { token, who } = await attempt();
        signedIn(token, who);
      } catch (e) {
        fill(error, e instanceof ApiError ? e.message : String(e));
        error.focus();
      } finally {
        button.disabled = false;
      }
    });
  const value = (/** @type {HTMLFormElement} */ form, /** @type {string} */ name) => /** @type {HTMLInputElement} */ (form.elements.namedItem(name)).value;
  onSubmit(password, async () => {
    const body = { username: value(password, 'username'), password: value(password, 'password'), project: value(password, 'project'), domain: value(password, 'domain') };
    const { body: answer } = await request('POST', 'session', { body });
    const { token, ...who } = answer;
    return { token, who };
  });
  onSubmit(pasted, async () => {
    const token = value(pasted, 'token').trim();
    return { token, who: await whoIs(token) };
  });

  error.tabIndex = -1;
  fill(
    main,
    h('h1', { tabindex: -1 }, 'Sign in to Trellis'),
    h('p', {}, 'You see and change the clusters of the project you sign in to, with the rights your roles give you there.'),
    error,
    h('div', { class: 'columns' }, password, pasted),
  );
  /** @type {HTMLInputElement} */ (password.querySelector('input')).focus();
}

/**
 * Whom a token belongs to (GET /ui/session); an ApiError 401 when Keystone does not accept it.
 * @param {string} token
 * @returns {Promise<Who>}
 */
export async function whoIs(token) {
  return (await request('GET', 'session', { token })).body;
}
