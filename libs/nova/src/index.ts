export * from './nova.port';
export { NovaError, NovaForbiddenError, NovaResponseError, NovaMicroversionError, isNovaError, type NovaErrorDetails, type OpenStackService } from './nova.errors';
export { MAX_MICROVERSION, compareMicroversions } from './microversion';
export { TRELLIS_ACTION_KEY, TRELLIS_NODE_KEY, TRELLIS_CLUSTER_KEY, trellisMetadata, findServerFor, findServersFor, type ServerTag } from './idempotency';
export { createNovaClient, NovaHttpClient, type NovaClientOptions } from './nova-http.client';
export { TrustError, TrustedNovaPool, type TrustedNovaPoolOptions } from './trusted-nova';
export { KeystoneCloudCatalog, createCloudCatalog } from './cloud-catalog';
