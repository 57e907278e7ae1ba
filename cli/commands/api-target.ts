import { loadConfig } from '@trellis/common';
import { stringOption, type OptionSpec, type ParsedCommand } from './args';
import { readRunningInstance } from './running-instance';
import { tokenFor } from './token.command';

/** The options of a command that talks to the running Trellis as a user (`example`, `watch`). */
export const API_TARGET_OPTIONS: Record<'user' | 'api', OptionSpec> = {
  user: { type: 'string', value: 'NAME', help: "the simulator's user to act as (default demo); with a cloud set, the OS_* credentials" },
  api: { type: 'string', value: 'URL', help: 'the Trellis API (default: the embedded default running from this directory, else TRELLIS_PUBLIC_URL or http://127.0.0.1:TRELLIS_PORT)' },
};

/**
 * Where the API is and a token for it, as `trellis token` finds them: --api, else the embedded
 * default running from this directory, else the configured URL; the token of --user (or OS_*).
 */
export async function apiTarget(parsed: ParsedCommand): Promise<{ apiUrl: string; token: string }> {
  const config = loadConfig();
  const apiUrl =
    stringOption(parsed, 'api') ?? readRunningInstance(config.database.dataDir)?.api_url ?? config.http.publicUrl ?? `http://127.0.0.1:${config.http.port}`;
  return { apiUrl: apiUrl.replace(/\/+$/, ''), token: await tokenFor(config, stringOption(parsed, 'user')) };
}
