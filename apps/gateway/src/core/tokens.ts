/** Nest injection tokens for what the composition root hands the gateway (GatewayDeps). */
export const DATA_SOURCE = Symbol('DATA_SOURCE');
export const MESSAGE_BUS = Symbol('MESSAGE_BUS');
export const POLICY_REGISTRY = Symbol('POLICY_REGISTRY');
export const GATEWAY_LOGGER = Symbol('GATEWAY_LOGGER');
export const POLICY_ENFORCER = Symbol('POLICY_ENFORCER');
export const CLOUD_CATALOG = Symbol('CLOUD_CATALOG');
/** Keystone's password sign-in for the web page (optional: without it the page takes a pasted token) */
export const PASSWORD_SIGN_IN = Symbol('PASSWORD_SIGN_IN');
