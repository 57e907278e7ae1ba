import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { listServices } from '@trellis/persistence';
import { requireVersion } from '../core/api-version';
import { Operation } from '../core/policy.guard';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { UnitOfWork } from '../infra/unit-of-work';
import { Ok, SenlinApi } from '../openapi/api-docs.decorators';
import { list, nullable, oneOf, str, uuid, view, type OutOf } from '../shapes/response';

const Service = view('Service', {
  binary: str({ example: 'trellis-policy-engine' }),
  disabled_reason: nullable(str({ example: null })),
  host: str({ example: 'node-1' }),
  id: uuid(),
  state: oneOf(['up', 'down'], { description: '`up` while the component renews its registration (every 10 s; `down` after 30 s without).' }),
  status: oneOf(['enabled', 'disabled']),
  topic: str({ example: 'trellis.policy-engine.actions', description: 'The queue or endpoint the component serves.' }),
  updated_at: str({ example: '2026-11-25T17:40:00' }),
});
const ServiceList = view('ServiceList', { services: list(Service) });

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
  @Ok(ServiceList, '>= 1.7.')
  async list(@Ctx() req: ApiRequest): Promise<OutOf<typeof ServiceList>> {
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
