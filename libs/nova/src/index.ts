export * from './nova.port';
export { NovaError, NovaForbiddenError, NovaResponseError, NovaMicroversionError, isNovaError, type NovaErrorDetails, type OpenStackService } from './nova.errors';
export {
  resolveCredentials,
  normaliseAuthUrl,
  type Credentials,
  type PasswordCredentials,
  type ApplicationCredentials,
  type CredentialSources,
  type EndpointInterface,
} from './credentials';
export { DEFAULT_RETRY, backoffDelay, parseRetryAfter, type RetryOptions, type NovaLogger } from './http-transport';
export { KeystoneSession, selectEndpoint, type CatalogService, type Token } from './keystone-session';
export { MAX_MICROVERSION, compareMicroversions } from './microversion';
export { TRELLIS_ACTION_KEY, TRELLIS_NODE_KEY, TRELLIS_CLUSTER_KEY, trellisMetadata, findServerFor, findServersFor, type ServerTag } from './idempotency';
export { createNovaClient, issueToken, NovaHttpClient, type NovaClientOptions } from './nova-http.client';
export { createTokenValidator, KeystoneTokenValidator, type TokenValidatorOptions } from './token-validator';
export { KeystoneTrusts, createKeystoneTrusts, type TrustRecord } from './trusts';
export { TrustError, TrustedNovaPool, type TrustedNovaPoolOptions } from './trusted-nova';
export { KeystoneCloudCatalog, createCloudCatalog } from './cloud-catalog';
export { KeystonePasswordSignIn, createPasswordSignIn } from './sign-in';
