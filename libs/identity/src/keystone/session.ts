import type { OpenStackSettings } from '@trellis/common';
import { resolveCredentials, type CredentialSources } from './credentials';
import { DEFAULT_RETRY, HttpTransport, defaultRuntime, type NovaLogger, type RetryOptions, type Runtime } from './http-transport';
import { KeystoneSession } from './keystone-session';

/** How a client of an OpenStack service reaches it: credentials, HTTP, retries, token renewal. */
export interface KeystoneClientOptions extends CredentialSources {
  /** one HTTP exchange (default: node:http(s) with keep-alive) */
  exchange?: Runtime['exchange'];
  /** epoch milliseconds */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** in [0, 1), for the backoff jitter */
  random?: () => number;
  logger?: NovaLogger;
  retry?: Partial<RetryOptions>;
  /** per HTTP attempt, body included (default 30 s) */
  timeoutMs?: number;
  /** renew the Keystone token this long before it expires (default 5 min, at most half its lifetime) */
  renewMarginMs?: number;
}

export interface ResolvedClientOptions {
  runtime: Runtime;
  retry: RetryOptions;
  timeoutMs: number;
  renewMarginMs: number;
}

export function resolveClientOptions(options: KeystoneClientOptions): ResolvedClientOptions {
  const base = defaultRuntime();
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  for (const [key, min] of [['attempts', 1], ['conflictAttempts', 1], ['baseDelayMs', 0], ['maxDelayMs', 0], ['maxRetryAfterMs', 0]] as const) {
    if (!Number.isFinite(retry[key]) || retry[key] < min) throw new RangeError(`retry.${key} must be a number >= ${min}, got ${retry[key]}`);
  }
  return {
    runtime: {
      exchange: options.exchange ?? base.exchange,
      now: options.now ?? base.now,
      sleep: options.sleep ?? base.sleep,
      random: options.random ?? base.random,
      logger: options.logger ?? base.logger,
    },
    retry,
    timeoutMs: options.timeoutMs ?? 30_000,
    renewMarginMs: options.renewMarginMs ?? 300_000,
  };
}

/** A Keystone session for these settings; config errors are thrown here, at start-up. */
export function createSession<R extends ResolvedClientOptions = ResolvedClientOptions>(
  settings: OpenStackSettings,
  options: KeystoneClientOptions = {},
  resolved: R = resolveClientOptions(options) as R,
): { session: KeystoneSession; resolved: R } {
  const credentials = resolveCredentials(settings, options);
  const transport = new HttpTransport(resolved.runtime, resolved.retry, resolved.timeoutMs);
  return { session: new KeystoneSession(credentials, transport, resolved.runtime, { renewMarginMs: resolved.renewMarginMs }), resolved };
}

/** A fresh Keystone token for these settings (for scripts: `trellis token`). */
export async function issueToken(settings: OpenStackSettings, options: KeystoneClientOptions = {}): Promise<string> {
  return (await createSession(settings, options).session.token()).value;
}
