import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { listServices } from '@trellis/persistence';
import { requireVersion } from '../core/api-version';
import { Operation } from '../core/policy.guard';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { UnitOfWork } from '../infra/unit-of-work';
import { SenlinApi } from '../openapi/api-docs.decorators';
import { ServiceList } from '../openapi/response-bodies.dto';

/**
 * Senlin's service list (1.7, cloud admin): every running gateway, policy-engine and nova-worker,
 * `up` while it renews its row in `services`, `down` when it has stopped renewing it.
 */
@ApiTags('services')
@SenlinApi()
@Controller('v1/services')
export class ServicesController {
  constructor(private readonly uow: UnitOfWork) {}

  @Get()
  @Operation('services:index')
  @ApiOkResponse({ type: ServiceList, description: '>= 1.7.' })
  async list(@Ctx() req: ApiRequest) {
    requireVersion(req.version, '1.7');
    const services = await listServices(this.uow.manager);
    return {
      services: services.map((s) => ({
        binary: s.binary,
        disabled_reason: s.disabled_reason,
        host: s.host,
        id: s.id,
        state: s.state,
        status: s.status,
        topic: s.topic,
        updated_at: s.updated_at.toISOString().replace(/\.\d{3}Z$/, ''),
      })),
    };
  }
}
