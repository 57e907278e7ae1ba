import { Controller, Get, HttpCode, Inject, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { PublicRoute } from '../core/api.guard';
import { MAX_API_VERSION, MIN_API_VERSION } from '../core/api-version';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import type { HttpRequest } from '../core/http.types';
import { contextOf } from '../core/request-context.middleware';

/** The document keystoneauth/openstacksdk read to find the endpoint and its microversion range. */
export function versionDocument(baseUrl: string) {
  return {
    id: '1.0',
    status: 'CURRENT',
    updated: '2016-01-18T00:00:00Z',
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.clustering-v1+json' }],
    links: [
      { href: `${baseUrl}/v1`, rel: 'self' },
      { rel: 'help', href: 'https://docs.openstack.org/api-ref/clustering' },
    ],
    min_version: MIN_API_VERSION.toString(),
    max_version: MAX_API_VERSION.toString(),
  };
}

@ApiExcludeController()
@Controller()
@PublicRoute()
export class VersionsController {
  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  @Get(['', 'versions'])
  @HttpCode(300)
  list(@Req() req: HttpRequest) {
    return { versions: [versionDocument(contextOf(req, this.config.publicUrl).baseUrl)] };
  }

  @Get('v1')
  show(@Req() req: HttpRequest) {
    return { version: versionDocument(contextOf(req, this.config.publicUrl).baseUrl) };
  }
}
