import { NovaMicroversionError } from './nova.errors';

/** The newest compute microversion whose shapes this client knows (Nova Zed's maximum). */
export const MAX_MICROVERSION = '2.93';

/** Microversions at which a shape the client depends on changed. */
export const MV = {
  /** soft-affinity and soft-anti-affinity server groups */
  SOFT_POLICIES: '2.15',
  /** `networks` is required on create and may be "none" or "auto" */
  NETWORKS_KEYWORDS: '2.37',
  /** server group `policy` (string) + `rules` instead of `policies` (list) */
  GROUP_POLICY_RULES: '2.64',
} as const;

export function parseMicroversion(text: string): [number, number] | null {
  const m = /^(\d+)\.(\d+)$/.exec(text.trim());
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** numeric comparison: 2.9 < 2.10 */
export function compareMicroversions(a: string, b: string): number {
  const pa = parseMicroversion(a);
  const pb = parseMicroversion(b);
  if (!pa || !pb) throw new Error(`not a microversion: '${pa ? b : a}'`);
  return pa[0] - pb[0] || pa[1] - pb[1];
}

export const atLeast = (version: string, needed: string) => compareMicroversions(version, needed) >= 0;

export interface VersionDocument {
  /** highest microversion offered; null when the API has no microversions (plain v2.1) */
  max: string | null;
  min: string | null;
  /** the v2.1 API's own URL when the document was the root list of versions */
  href: string | null;
}

/**
 * Reads either the v2.1 document (`{"version": {...}}`, what GET on the catalog URL answers) or the
 * root list (`{"versions": [...]}`, what GET / answers). Null when the body is neither.
 */
export function readVersionDocument(body: unknown): VersionDocument | null {
  if (!body || typeof body !== 'object') return null;
  const obj = body as Record<string, unknown>;
  const pick = (v: Record<string, unknown>, withHref: boolean): VersionDocument => {
    const text = (x: unknown) => (typeof x === 'string' && parseMicroversion(x) ? x : null);
    const links = Array.isArray(v.links) ? (v.links as Array<Record<string, unknown>>) : [];
    const self = links.find((l) => l && l.rel === 'self' && typeof l.href === 'string');
    return { max: text(v.version) ?? text(v.max_version), min: text(v.min_version), href: withHref && self ? String(self.href) : null };
  };
  if (obj.version && typeof obj.version === 'object') return pick(obj.version as Record<string, unknown>, false);
  if (Array.isArray(obj.versions)) {
    const entries = obj.versions.filter((v): v is Record<string, unknown> => !!v && typeof v === 'object');
    const v21 = entries.find((v) => v.id === 'v2.1') ?? entries.find((v) => v.status === 'CURRENT');
    return v21 ? pick(v21, true) : null;
  }
  return null;
}

/** min(highest offered, MAX_MICROVERSION); 2.1 when the API offers no microversions. */
export function chooseMicroversion(doc: VersionDocument): string {
  if (doc.min && compareMicroversions(doc.min, MAX_MICROVERSION) > 0) {
    throw new NovaMicroversionError(
      `this Nova requires compute microversion ${doc.min} or newer; this client speaks 2.1 to ${MAX_MICROVERSION}`,
    );
  }
  if (!doc.max) return '2.1';
  return compareMicroversions(doc.max, MAX_MICROVERSION) > 0 ? MAX_MICROVERSION : doc.max;
}

export function microversionHeaders(version: string): Record<string, string> {
  return { 'OpenStack-API-Version': `compute ${version}`, 'X-OpenStack-Nova-API-Version': version };
}
