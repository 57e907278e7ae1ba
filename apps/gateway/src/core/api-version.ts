import { DomainError, badRequest } from '@trellis/common';

/** A clustering microversion, `1.x`. */
export class ApiVersion {
  constructor(
    readonly major: number,
    readonly minor: number,
  ) {}

  static parse(text: string): ApiVersion {
    const m = /^(\d+)\.(\d+)$/.exec(text);
    if (!m) throw new Error(`not a version: ${text}`);
    return new ApiVersion(Number(m[1]), Number(m[2]));
  }

  compare(other: ApiVersion): number {
    return this.major - other.major || this.minor - other.minor;
  }

  atLeast(text: string): boolean {
    return this.compare(ApiVersion.parse(text)) >= 0;
  }

  toString(): string {
    return `${this.major}.${this.minor}`;
  }
}

export const MIN_API_VERSION = ApiVersion.parse('1.0');
export const MAX_API_VERSION = ApiVersion.parse('1.14');
export const SERVICE_TYPE = 'clustering';
export const API_VERSION_HEADER = 'OpenStack-API-Version';

const ACCEPT_VERSION = /application\/vnd\.openstack\.clustering-v(\d+(?:\.\d+)?)/;

/**
 * Picks the requested microversion as Senlin's middleware did (microversion-parse): the
 * `clustering` entry of `OpenStack-API-Version` (other services in the header are ignored), else a
 * version in the `Accept` media type, else 1.0. `latest` is the maximum.
 */
export function negotiateApiVersion(header: string | undefined, accept: string | undefined): ApiVersion {
  let requested: string | null = null;
  if (header !== undefined) {
    for (const part of header.split(',')) {
      const [service, ...rest] = part.trim().split(/\s+/);
      if (service?.toLowerCase() === SERVICE_TYPE && rest.length > 0) requested = rest.join(' ');
    }
  }
  if (requested === null && accept !== undefined) {
    const m = ACCEPT_VERSION.exec(accept);
    if (m) requested = m[1].includes('.') ? m[1] : `${m[1]}.0`;
  }
  if (requested === null) return MIN_API_VERSION;
  if (requested.toLowerCase() === 'latest') return MAX_API_VERSION;
  if (!/^\d+\.\d+$/.test(requested)) {
    throw badRequest(
      `API Version String '${requested}' is of invalid format. It must be of format 'major.minor'.`,
      'InvalidAPIVersionString',
    );
  }
  const version = ApiVersion.parse(requested);
  if (version.compare(MIN_API_VERSION) < 0 || version.compare(MAX_API_VERSION) > 0) {
    throw new DomainError(
      'NOT_ACCEPTABLE',
      `Version '${requested}' is not supported by the API. Minimum is '${MIN_API_VERSION}' and maximum is '${MAX_API_VERSION}'.`,
      'InvalidGlobalAPIVersion',
    );
  }
  return version;
}

/** 400 for a method that needs a newer microversion than the request asked for. */
export function requireVersion(version: ApiVersion, min: string): void {
  if (!version.atLeast(min)) {
    throw badRequest(`API version '${version}' is not supported on this method.`, 'MethodVersionNotFound');
  }
}
