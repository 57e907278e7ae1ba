import { createHash } from 'node:crypto';

/**
 * What a decision, a node or a finding shows to a caller who is neither a cloud admin nor a project
 * admin (docs/SECURITY.md): hosts as Nova shows them to non-admins. Pure: no I/O.
 */

/**
 * Nova's `hostId` of a server (nova.utils.generate_hostid): lowercase hex sha224 of the server's
 * project id followed by the host name, so one host has a different id in each project.
 */
export function hostIdOf(projectId: string, host: string): string {
  return createHash('sha224').update(projectId + host, 'utf8').digest('hex');
}

export interface HideHostsOptions {
  /** the project of the object shown (the action's, node's, finding's or event's), not the caller's */
  projectId: string;
  /** the host names to hide; names that look like a hostId already (56 hex digits) are ignored */
  hostNames: Iterable<string> | HostNames;
}

/**
 * Host names to hide, prepared once for any number of hiders (of any project): the names without
 * duplicates, empty strings and hostIds, and whether each is a whole token. With 10,000 hypervisors,
 * preparing them took 2-4 ms for every request that hid hosts.
 */
export class HostNames {
  private constructor(
    /** the names to hide */
    readonly names: ReadonlySet<string>,
    /** every name is a whole token (TOKEN_NAME), so they can be looked up token by token */
    readonly tokens: boolean,
  ) {}

  static of(names: Iterable<string>): HostNames {
    const set = new Set<string>();
    let tokens = true;
    for (const n of names) {
      if (typeof n !== 'string' || n === '' || HOST_ID.test(n) || set.has(n)) continue;
      set.add(n);
      if (tokens && !TOKEN_NAME.test(n)) tokens = false;
    }
    return new HostNames(set, tokens);
  }

  has(name: string): boolean {
    return this.names.has(name);
  }

  /** These names and `more`: this object itself when `more` adds none. */
  with(more: Iterable<string>): HostNames {
    let added: string[] | null = null;
    for (const n of more) {
      if (typeof n !== 'string' || n === '' || this.names.has(n) || HOST_ID.test(n)) continue;
      (added ??= []).push(n);
    }
    return added ? HostNames.of([...this.names, ...added]) : this;
  }
}

/**
 * A name only counts where no name character borders it: [A-Za-z0-9._-], except that a dot counts
 * only between name characters, so the full stop after `on host host-10.` ends the name while
 * `host-1` inside `host-1.example.com` is left alone.
 */
const BEFORE = '(?<![A-Za-z0-9_-])(?<![A-Za-z0-9_-]\\.)';
const AFTER = '(?![A-Za-z0-9_-])(?!\\.[A-Za-z0-9_-])';
const HOST_ID = /^[0-9a-f]{56}$/;

/** the note that replaces the hypervisor list */
export const hiddenHypervisorsNote = (count: number) =>
  `${count} hypervisor${count === 1 ? '' : 's'}; hypervisor and host names are shown to admins only`;

/**
 * A deep copy of `value` in which every string (object keys included) that is, or contains as a
 * whole token, one of the host names has the name replaced by its hostId. A token is delimited by
 * the start or end of the string or by a character outside [A-Za-z0-9._-] (a dot delimits unless a
 * name character follows it, resp. precedes it, see BEFORE/AFTER); longer names are tried first,
 * so `host-1` never matches inside `host-10`. Every object whose `cloud` member has a
 * `hypervisors` list (a decision's input snapshot) gets `hypervisors: []` and
 * `hidden: {hypervisors: "<n> hypervisors; ..."}` instead. Numbers, booleans and null are kept;
 * `value` is not changed.
 */
export function hideHosts<T>(value: T, options: HideHostsOptions): T {
  return hostHider(options)(value);
}

/**
 * `hideHosts` with its options prepared once, for many values of one project hidden with the same
 * names: a page of 100 nodes prepared them 100 times, about two thirds of the gateway's CPU for the
 * page. Names that are whole tokens (as host names are) are looked up token by token, each hostId
 * computed when first met; any other name makes it one pattern of every name.
 */
export function hostHider(options: HideHostsOptions): <T>(value: T) => T {
  const names = options.hostNames instanceof HostNames ? options.hostNames : HostNames.of(options.hostNames);
  return hiderOf(names.tokens ? tokenText(names.names, options.projectId) : patternText([...names.names], options.projectId));
}

/** A name made only of name characters, with single dots between them: always one whole token. */
const TOKEN_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
/** Every whole token of a string (BEFORE/AFTER's rules): a run of name characters and dots between them. */
const TOKEN = new RegExp(`${BEFORE}[A-Za-z0-9_-]+(?:\\.[A-Za-z0-9_-]+)*`, 'g');

/**
 * The replacement when every name is a whole token (TOKEN_NAME): each token of a string looked up,
 * its hostId computed the first time it is met. Cost by the length of the strings, not by the
 * number of names: with 10,000 hypervisors, one pattern of every name and a sha224 of each for
 * every request took a page of 1,000 nodes to a second (BENCHMARKS.md, scale-out).
 */
function tokenText(known: ReadonlySet<string>, projectId: string): (s: string) => string {
  const ids = new Map<string, string>();
  const idOf = (name: string) => {
    let id = ids.get(name);
    if (id === undefined) ids.set(name, (id = hostIdOf(projectId, name)));
    return id;
  };
  return (s) => (known.size ? s.replace(TOKEN, (token) => (known.has(token) ? idOf(token) : token)) : s);
}

/** The replacement for any names: one pattern of them all, the longest tried first. */
export function patternText(names: string[], projectId: string): (s: string) => string {
  const sorted = [...names].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  const ids = new Map(sorted.map((n) => [n, hostIdOf(projectId, n)]));
  const pattern = sorted.length ? new RegExp(`${BEFORE}(?:${sorted.map(escapeRegExp).join('|')})${AFTER}`, 'g') : null;
  return (s) => (pattern ? s.replace(pattern, (name) => ids.get(name)!) : s);
}

/** The deep copy hideHosts makes, with `text` replacing names in every string. */
export function hiderOf(text: (s: string) => string): <T>(value: T) => T {
  const copy = (v: unknown, key: string | null): unknown => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map((item) => copy(item, null));
    if (v === null || typeof v !== 'object' || !isPlainObject(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) out[text(k)] = copy(item, k);
    if (key === 'cloud' && Array.isArray((v as Record<string, unknown>).hypervisors)) {
      const count = ((v as Record<string, unknown>).hypervisors as unknown[]).length;
      out.hypervisors = [];
      out.hidden = { ...(isPlainObject(out.hidden) ? out.hidden : {}), hypervisors: hiddenHypervisorsNote(count) };
    }
    return out;
  };
  return <T>(value: T) => copy(value, null) as T;
}

/**
 * The host names a value itself names: `hypervisor_hostname`, a hypervisor's `service.host`, and
 * any string member called `host` (a node's `data.placement.host` and `server.host`, a finding's
 * or an event's host) or list called `hosts` (the `host_zones` fact's items).
 */
export function hostNamesIn(value: unknown, into: Set<string> = new Set()): Set<string> {
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const item of v) walk(item);
      return;
    }
    if (v === null || typeof v !== 'object' || !isPlainObject(v)) return;
    for (const [k, item] of Object.entries(v)) {
      if ((k === 'host' || k === 'hypervisor_hostname') && typeof item === 'string' && item) into.add(item);
      else if (k === 'hosts' && Array.isArray(item)) for (const h of item) if (typeof h === 'string' && h) into.add(h);
      walk(item);
    }
  };
  walk(value);
  return into;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
