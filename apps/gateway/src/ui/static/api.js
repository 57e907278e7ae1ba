// @ts-check
/**
 * The clustering API as the page uses it: the same /v1 REST API any client calls, with the signed-in
 * person's token, so the API's tenancy and policy rules decide what the page can see and do.
 */

/** The microversion the page speaks (cluster_id on actions, findings, dry runs). */
const MICROVERSION = 'clustering 1.14';

export class ApiError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Where the page's own endpoints and the API are, relative to the page (served at <base>/ui/), so
 * it works behind a proxy that adds a path prefix.
 * @param {string} path `/v1/...` or `session`
 */
function urlOf(path) {
  return new URL(path.startsWith('/') ? `..${path}` : path, document.baseURI).toString();
}

/** the longest a 429's Retry-After is waited for before one more try (seconds) */
const MAX_RETRY_AFTER = 10;

/**
 * @param {string} method
 * @param {string} path
 * @param {{token?: string | null, body?: unknown}} [options]
 * @returns {Promise<{status: number, body: any, location: string | null}>}
 */
export async function request(method, path, options = {}) {
  /** @type {Record<string, string>} */
  const headers = { 'OpenStack-API-Version': MICROVERSION, Accept: 'application/json' };
  if (options.token) headers['X-Auth-Token'] = options.token;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const send = async () => {
    try {
      return await fetch(urlOf(path), { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    } catch {
      throw new ApiError(0, 'Trellis did not answer: is it running, and is the network up?');
    }
  };
  let res = await send();
  // the project's request rate is spent (other tabs, other clients of the project): wait as asked, once
  const wait = Number(res.headers.get('Retry-After'));
  if (res.status === 429 && wait > 0 && wait <= MAX_RETRY_AFTER) {
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    res = await send();
  }
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = { error: { message: text.slice(0, 200) } };
  }
  if (!res.ok) throw new ApiError(res.status, body?.error?.message ?? `${res.status} ${res.statusText}`);
  return { status: res.status, body, location: res.headers.get('Location') };
}

/**
 * The API with one token. `onUnauthorized` runs when the token is refused (expired, revoked), so
 * the page can ask the person to sign in again.
 * @param {string} token
 * @param {() => void} onUnauthorized
 */
export function apiWith(token, onUnauthorized) {
  /** @param {string} method @param {string} path @param {unknown} [body] */
  const call = async (method, path, body) => {
    try {
      return await request(method, path, { token, body });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) onUnauthorized();
      throw e;
    }
  };
  return {
    /** @param {string} path */
    get: async (path) => (await call('GET', path)).body,
    /** @param {string} path */
    getOrNull: async (path) => {
      try {
        return (await call('GET', path)).body;
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }
    },
    /** @param {string} path @param {unknown} body */
    post: (path, body) => call('POST', path, body),
  };
}

/** @typedef {ReturnType<typeof apiWith>} Api */

/**
 * The action id of a 202's Location header (`.../v1/actions/<id>`).
 * @param {string | null} location
 */
export function actionIdOf(location) {
  const id = location?.split('/actions/')[1];
  if (!id) throw new ApiError(0, 'the API accepted the request but named no action');
  return id;
}
