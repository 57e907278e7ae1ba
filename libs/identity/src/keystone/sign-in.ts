import type { OpenStackSettings } from '@trellis/common';
import type { PasswordSignIn, PasswordSignInRequest } from '../identity.port';
import type { PasswordCredentials } from './credentials';
import { KeystoneSession } from './keystone-session';
import { createSession, type KeystoneClientOptions, type ResolvedClientOptions } from './session';

/** Keystone refused the credentials (401, 403, 404): a wrong password, an unknown user or project. */
class Refused extends Error {}

/**
 * Password sign-in against the Keystone Trellis is configured with (its auth URL, region and
 * interface come from the service's own settings; only the person's credentials differ). Each
 * sign-in is one `POST /v3/auth/tokens`; nothing is kept.
 */
export class KeystonePasswordSignIn implements PasswordSignIn {
  constructor(
    /** the service's own session: where Keystone is, and the HTTP transport with its retries */
    private readonly service: KeystoneSession,
    private readonly options: ResolvedClientOptions,
  ) {}

  async signIn(request: PasswordSignInRequest): Promise<{ token: string; expiresAt: Date } | null> {
    const base = this.service.credentials;
    const credentials: PasswordCredentials = {
      method: 'password',
      authUrl: base.authUrl,
      regionName: base.regionName,
      interface: base.interface,
      computeEndpoint: null,
      computeApiVersion: null,
      source: 'the sign-in form',
      user: { id: null, name: request.username, domainId: null, domainName: request.domain },
      password: request.password,
      project: { id: null, name: request.project, domainId: null, domainName: request.domain },
    };
    const session = new KeystoneSession(credentials, this.service.transport, this.options.runtime, {
      renewMarginMs: this.options.renewMarginMs,
      refused: () => new Refused(),
    });
    try {
      const token = await session.token();
      return { token: token.value, expiresAt: new Date(token.expiresAt) };
    } catch (e) {
      if (e instanceof Refused) return null;
      throw e;
    }
  }
}

/** Password sign-in against the Keystone of these settings. Throws ConfigError naming a missing or bad setting. */
export function createPasswordSignIn(settings: OpenStackSettings, options: KeystoneClientOptions = {}): KeystonePasswordSignIn {
  const { session, resolved } = createSession(settings, options);
  return new KeystonePasswordSignIn(session, resolved);
}
