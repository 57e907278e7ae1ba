export {
  TOKEN_VALIDATOR,
  TRUST_ISSUER,
  TrustUnusableError,
  type PasswordSignIn,
  type PasswordSignInRequest,
  type TokenValidator,
  type TrustIssuer,
} from './identity.port';
export { KeystonePasswordSignIn, createPasswordSignIn } from './keystone/sign-in';
export { KeystoneTokenValidator, createTokenValidator, type TokenValidatorOptions } from './keystone/token-validator';
export { KeystoneTrusts, createKeystoneTrusts, type TrustRecord } from './keystone/trusts';
export { createSession, issueToken, resolveClientOptions, type KeystoneClientOptions, type ResolvedClientOptions } from './keystone/session';
export { KeystoneSession, selectEndpoint, type CatalogService, type Token } from './keystone/keystone-session';
export {
  resolveCredentials,
  normaliseAuthUrl,
  type Credentials,
  type PasswordCredentials,
  type ApplicationCredentials,
  type CredentialSources,
  type EndpointInterface,
} from './keystone/credentials';
export {
  DEFAULT_RETRY,
  HttpTransport,
  backoffDelay,
  defaultRuntime,
  parseRetryAfter,
  pathOf,
  type HttpResponse,
  type NovaLogger,
  type RetryOptions,
  type Runtime,
} from './keystone/http-transport';
export { NovaError, NovaForbiddenError, NovaResponseError, isNovaError, type NovaErrorDetails, type OpenStackService } from './keystone/openstack.errors';
