import { Inject, Injectable } from '@nestjs/common';
import { DomainError, unavailable, type CatalogAnswer, type CloudCatalog } from '@trellis/common';
import { CLOUD_CATALOG } from '../core/tokens';
import { isMap } from '../shared/body';
import { NOVA_SERVER_PROFILE_TYPE } from './nova-server.profile-type';
import type { ValidatedProfileSpec } from './profile-type';

/**
 * Senlin's os.nova.server do_validate at profile create and validate: the flavor, the image and each
 * network the spec names must exist for the caller (looked up with the caller's own token). An
 * unknown one is a 400 with Senlin's message; a cloud that cannot be asked is a 503. Profiles of the
 * types Trellis keeps but does not build are not looked up (there is nothing of theirs to boot).
 */
@Injectable()
export class ProfileCloudCheck {
  constructor(@Inject(CLOUD_CATALOG) private readonly catalog: CloudCatalog) {}

  async check(userToken: string, validated: ValidatedProfileSpec): Promise<void> {
    if (validated.profileType !== NOVA_SERVER_PROFILE_TYPE) return;
    const properties = validated.properties;
    const flavor = properties.flavor;
    if (typeof flavor === 'string') {
      if ((await this.ask(`flavor '${flavor}'`, () => this.catalog.findFlavor(userToken, flavor))) === 'missing') {
        throw invalid(`The specified flavor '${flavor}' could not be found.`);
      }
    }
    const image = properties.image;
    if (typeof image === 'string') {
      if ((await this.ask(`image '${image}'`, () => this.catalog.findImage(userToken, image))) === 'missing') {
        throw invalid(`The specified image '${image}' could not be found.`);
      }
    }
    const networks = Array.isArray(properties.networks) ? properties.networks : [];
    for (const spec of networks) {
      const network = isMap(spec) ? spec.network : undefined;
      if (typeof network !== 'string') continue;
      if ((await this.ask(`network '${network}'`, () => this.catalog.findNetwork(userToken, network))) === 'missing') {
        throw invalid(`The specified network ${network} could not be found.`);
      }
    }
  }

  private async ask(what: string, lookup: () => Promise<CatalogAnswer>): Promise<CatalogAnswer> {
    try {
      return await lookup();
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      throw unavailable(`Trellis could not look up the profile's ${what} in the cloud: ${reason}`);
    }
  }
}

const invalid = (message: string) => new DomainError('INVALID_SPEC', message, 'InvalidSpec');
