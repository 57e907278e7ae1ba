import { Body, Controller, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiQuery, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { API_VERSION_HEADER, SERVICE_TYPE, negotiateApiVersion } from '../core/api-version';
import { PublicRoute } from '../core/api.guard';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import type { HttpRequest, HttpResponse } from '../core/http.types';
import { contextOf } from '../core/request-context.middleware';
import { AcceptedAction, Fails, RequestBody, SenlinApi } from '../openapi/api-docs.decorators';
import { ActionAccepted } from '../shared/views';
import { WebhookTriggerBody } from './receiver.shapes';
import { WebhooksService } from './webhooks.service';

/**
 * Senlin's webhook: no X-Auth-Token (the URL is the credential, docs/SECURITY.md Webhooks), so the
 * route is public for the ApiGuard and does its own microversion negotiation.
 */
@ApiTags('webhooks')
@SenlinApi()
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Post(':webhook_id/trigger')
  @PublicRoute()
  @HttpCode(202)
  @ApiSecurity({})
  @ApiQuery({ name: 'V', required: true, description: 'Webhook version: 2 (as in the alarm_url), or 1.' })
  @RequestBody(WebhookTriggerBody, { required: false })
  @AcceptedAction(ActionAccepted, "The receiver's action was created, owned by the receiver's owner.")
  @Fails(404, 'No receiver has this id (the full id only: no names or short ids).')
  @Fails(403, "The owner's trust is gone, or the policy refuses webhooks:trigger for the owner.")
  async trigger(
    @Req() req: HttpRequest,
    @Res({ passthrough: true }) res: HttpResponse,
    @Param('webhook_id') id: string,
    @Body() body: unknown,
  ): Promise<{ action: string }> {
    const ctx = contextOf(req, this.config.publicUrl);
    const version = negotiateApiVersion(header(req, 'openstack-api-version'), header(req, 'accept'));
    res.setHeader(API_VERSION_HEADER, `${SERVICE_TYPE} ${version}`);
    const raw = req.query.V;
    const webhookVersion = raw === undefined ? [] : [raw].flat().map(String);
    const actionId = await this.webhooks.trigger({
      receiverId: id,
      webhookVersion,
      body: req.headers['content-length'] === '0' ? undefined : body,
      requestId: ctx.requestId,
      baseUrl: ctx.baseUrl,
      version,
    });
    res.setHeader('Location', `${ctx.baseUrl}/v1/actions/${actionId}`);
    return { action: actionId };
  }
}

function header(req: HttpRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}
