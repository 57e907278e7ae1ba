/**
 * Compute API microversions, negotiated the way nova-api does: `OpenStack-API-Version: compute X.Y`
 * wins over the legacy `X-OpenStack-Nova-API-Version: X.Y`; no header means 2.1; `latest` means the
 * maximum; a malformed value is 400 and a version outside [min, max] is 406.
 */
export class Microversion {
  constructor(
    readonly major: number,
    readonly minor: number,
  ) {}

  static parse(text: string): Microversion | null {
    const m = /^([1-9]\d*)\.([1-9]\d*|0)$/.exec(text.trim());
    return m ? new Microversion(Number(m[1]), Number(m[2])) : null;
  }

  compare(other: Microversion): number {
    return this.major - other.major || this.minor - other.minor;
  }

  /** true when this version is at least `text` (e.g. `v.atLeast('2.64')`) */
  atLeast(text: string): boolean {
    const other = Microversion.parse(text);
    if (!other) throw new Error(`bad microversion literal ${text}`);
    return this.compare(other) >= 0;
  }

  toString(): string {
    return `${this.major}.${this.minor}`;
  }
}

export const MIN_MICROVERSION = new Microversion(2, 1);

export type NegotiationResult =
  | { ok: true; version: Microversion }
  | { ok: false; status: 400 | 406; message: string };

const headerValue = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(',') : v);

/** Reads the compute version from request headers (lower-cased names, as node:http gives them). */
export function negotiateMicroversion(
  headers: Record<string, string | string[] | undefined>,
  max: Microversion,
): NegotiationResult {
  let requested: string | undefined;
  const modern = headerValue(headers['openstack-api-version']);
  if (modern !== undefined) {
    // The header may carry several services: "compute 2.64, identity 3".
    for (const part of modern.split(',')) {
      const [service, version] = part.trim().split(/\s+/, 2);
      if (service?.toLowerCase() === 'compute' && version !== undefined) requested = version;
    }
  }
  if (requested === undefined) requested = headerValue(headers['x-openstack-nova-api-version'])?.trim();
  if (requested === undefined || requested === '') return { ok: true, version: MIN_MICROVERSION };
  if (requested.toLowerCase() === 'latest') return { ok: true, version: max };
  const version = Microversion.parse(requested);
  if (!version) {
    return {
      ok: false,
      status: 400,
      message: `API Version String ${requested} is of invalid format. Must be of format MajorNum.MinorNum.`,
    };
  }
  if (version.compare(MIN_MICROVERSION) < 0 || version.compare(max) > 0) {
    return {
      ok: false,
      status: 406,
      message: `Version ${version} is not supported by the API. Minimum is ${MIN_MICROVERSION} and maximum is ${max}.`,
    };
  }
  return { ok: true, version };
}

/** The headers nova-api puts on every versioned response. */
export function versionHeaders(version: Microversion): Record<string, string> {
  return {
    'OpenStack-API-Version': `compute ${version}`,
    'X-OpenStack-Nova-API-Version': `${version}`,
    Vary: 'OpenStack-API-Version, X-OpenStack-Nova-API-Version',
  };
}
