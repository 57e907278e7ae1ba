import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { NotFound, SenlinApi } from '../openapi/api-docs.decorators';
import { ProfileTypeEnvelope, ProfileTypeList, ProfileTypeOps } from '../openapi/response-bodies.dto';
import { notFound } from '@trellis/common';
import { PROFILE_TYPE_NOVA_SERVER } from '@trellis/contracts';
import { requireVersion } from '../core/api-version';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { PROFILE_SUPPORT_STATUS, PROFILE_TYPE_NAME, PROFILE_TYPE_VERSION, renderProfileSchema } from './nova-server.profile-type';
import { Operation } from '../core/policy.guard';
import { renderOperations } from './nova-server.operations';

@ApiTags('profile-types')
@SenlinApi()
@Controller('v1/profile-types')
export class ProfileTypesController {
  @Get()
  @Operation('profile_types:index')
  @ApiOkResponse({ type: ProfileTypeList })
  list(@Ctx() req: ApiRequest) {
    if (req.version.atLeast('1.5')) {
      return {
        profile_types: [{ name: PROFILE_TYPE_NAME, version: PROFILE_TYPE_VERSION, support_status: PROFILE_SUPPORT_STATUS }],
      };
    }
    return { profile_types: [{ name: PROFILE_TYPE_NOVA_SERVER }] };
  }

  @Get(':type_name')
  @Operation('profile_types:get')
  @ApiOkResponse({ type: ProfileTypeEnvelope })
  @NotFound()
  show(@Ctx() req: ApiRequest, @Param('type_name') typeName: string) {
    if (typeName !== PROFILE_TYPE_NOVA_SERVER) throw notFound('profile_type', typeName);
    const view: Record<string, unknown> = { name: PROFILE_TYPE_NOVA_SERVER, schema: renderProfileSchema() };
    if (req.version.atLeast('1.5')) view.support_status = PROFILE_SUPPORT_STATUS;
    return { profile_type: view };
  }

  /** The server operations POST /v1/nodes/{id}/ops runs (Senlin's ServerProfile.OPERATIONS). */
  @Get(':type_name/ops')
  @Operation('profile_types:ops')
  @ApiOkResponse({ type: ProfileTypeOps, description: '>= 1.4.' })
  @NotFound()
  ops(@Ctx() req: ApiRequest, @Param('type_name') typeName: string) {
    requireVersion(req.version, '1.4');
    if (typeName !== PROFILE_TYPE_NOVA_SERVER) throw notFound('profile_type', typeName);
    return { operations: renderOperations() };
  }
}
