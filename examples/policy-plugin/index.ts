import { MaxPerZonePolicy } from './src/max-per-zone.policy';

/**
 * The plugin's entry module: `loadPolicyPlugins` registers the classes of a `policies` array (or,
 * without one, every exported @PolicyType class). Keep it the only .js file at the top of the
 * compiled folder: loading a folder loads every top-level .js file in it.
 */
export const policies = [MaxPerZonePolicy];

export { MaxPerZonePolicy };
export type { MaxPerZoneProperties } from './src/max-per-zone.policy';
