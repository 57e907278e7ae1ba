import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { version } from '../../../../package.json';
import { SenlinApi } from '../openapi/api-docs.decorators';
import { BuildInfoEnvelope } from '../openapi/response-bodies.dto';
import { Operation } from '../core/policy.guard';

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
  @ApiOkResponse({ type: BuildInfoEnvelope })
  show() {
    return { build_info: { api: { revision: version }, engine: { revision: version } } };
  }
}
