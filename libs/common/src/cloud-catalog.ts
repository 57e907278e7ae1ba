/**
 * What a profile spec names in the cloud (images, flavors, networks), looked up as the caller: with
 * the caller's own Keystone token, so the answer is what that user's project may use, as Senlin's
 * profile validation asked Glance, Nova and Neutron. Implemented over HTTP in libs/nova.
 *
 * `unchecked`: the cloud has no such service (no image or network service in the catalog), so the
 * name cannot be checked and is accepted. A cloud that does not answer makes the call throw (a
 * DomainError 'UNAVAILABLE' for timeouts and 5xx).
 */
export type CatalogAnswer = 'found' | 'missing' | 'unchecked';

export interface CloudCatalog {
  findImage(userToken: string, nameOrId: string): Promise<CatalogAnswer>;
  findFlavor(userToken: string, nameOrId: string): Promise<CatalogAnswer>;
  findNetwork(userToken: string, nameOrId: string): Promise<CatalogAnswer>;
}
