import type { ServerUpdateParams } from '@trellis/contracts';

/**
 * What changes on a node's server when it moves from one os.nova.server profile to another
 * (Senlin's server.py do_update), decided from the two profiles' properties so the nova-worker
 * needs no profile of its own.
 */

/** the properties Senlin's os.nova.server-1.0 schema marks `updatable` */
const UPDATABLE = new Set(['flavor', 'image', 'metadata', 'name', 'networks']);

export type ServerUpdate = { ok: true; params: ServerUpdateParams } | { ok: false; reason: string };

type Properties = Record<string, unknown>;

/** the `properties` of a profile spec */
export const propertiesOf = (spec: Record<string, unknown> | null | undefined): Properties =>
  (spec?.properties as Properties | undefined) ?? {};

/**
 * The server changes from `from` to `to` for the node named `nodeName`: a new image (rebuild), a
 * new flavor (resize), a new server name, new metadata. A property Senlin does not update
 * (validate_for_update) refuses the update; so do networks, which Trellis does not update yet.
 */
export function serverUpdate(from: Properties, to: Properties, nodeName: string): ServerUpdate {
  const fixed = Object.keys(to).filter((k) => !UPDATABLE.has(k) && !same(from[k], to[k]));
  if (fixed.length) return { ok: false, reason: `the following properties are not updatable: ${fixed.join(', ')}` };
  if (!same(from.networks ?? [], to.networks ?? [])) {
    return { ok: false, reason: 'updating the networks of a server is not supported by Trellis' };
  }
  const params: ServerUpdateParams = {};
  if (!same(from.image, to.image)) {
    if (typeof to.image !== 'string' || to.image === '') {
      return { ok: false, reason: 'Updating Nova server with image set to None is not supported by Nova' };
    }
    params.image = to.image;
  }
  if (!same(from.flavor, to.flavor)) params.flavor = String(to.flavor);
  // Senlin's _check_server_name: the profile's name, else the node's
  const oldName = textOr(from.name, nodeName);
  const newName = textOr(to.name, nodeName);
  if (oldName !== newName) params.name = newName;
  const oldMeta = stringMap(from.metadata);
  const newMeta = stringMap(to.metadata);
  if (!same(oldMeta, newMeta)) params.metadata = newMeta;
  return { ok: true, params };
}

const textOr = (value: unknown, fallback: string): string => (typeof value === 'string' && value !== '' ? value : fallback);

/** metadata as Nova stores it: string values */
function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = String(v);
  }
  return out;
}

/** structural equality of JSON values, key order aside */
function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}
