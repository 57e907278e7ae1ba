import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { version } from '../../../../package.json';
import { Ok, SenlinApi } from '../openapi/api-docs.decorators';
import { describedAs, str, view, type OutOf } from '../shapes/response';
import { Operation } from '../core/policy.guard';

const Revision = view('Revision', { revision: str({ example: '0.1.0' }) });
const BuildInfo = view('BuildInfo', { api: describedAs(Revision, 'The API service.'), engine: describedAs(Revision, 'The engine.') });
const BuildInfoEnvelope = view('BuildInfoEnvelope', { build_info: BuildInfo });

/**
 * Senlin's build information (api/openstack/v1/build_info.py): the revision of the API and of the
 * engine. Trellis's services are released together, so both are Trellis's version.
 */
@ApiTags('build-info')
@SenlinApi()
@Controller('v1/build-info')
export class BuildInfoController {
  @Get()
  @Operation('build_info:build_info')
  @Ok(BuildInfoEnvelope)
  show(): OutOf<typeof BuildInfoEnvelope> {
    return { build_info: { api: { revision: version }, engine: { revision: version } } };
  }
}
