import { Controller, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { notFound } from '@trellis/common';
import { PROFILE_TYPE_NOVA_SERVER } from '@trellis/contracts';
import { requireVersion } from '../core/api-version';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { PROFILE_SUPPORT_STATUS, PROFILE_TYPE_NAME, PROFILE_TYPE_VERSION, renderProfileSchema } from './nova-server.profile-type';

@ApiTags('profile-types')
@Controller('v1/profile-types')
export class ProfileTypesController {
  @Get()
  list(@Ctx() req: ApiRequest) {
    if (req.version.atLeast('1.5')) {
      return {
        profile_types: [{ name: PROFILE_TYPE_NAME, version: PROFILE_TYPE_VERSION, support_status: PROFILE_SUPPORT_STATUS }],
      };
    }
    return { profile_types: [{ name: PROFILE_TYPE_NOVA_SERVER }] };
  }

  @Get(':type_name')
  show(@Ctx() req: ApiRequest, @Param('type_name') typeName: string) {
    if (typeName !== PROFILE_TYPE_NOVA_SERVER) throw notFound('profile_type', typeName);
    const view: Record<string, unknown> = { name: PROFILE_TYPE_NOVA_SERVER, schema: renderProfileSchema() };
    if (req.version.atLeast('1.5')) view.support_status = PROFILE_SUPPORT_STATUS;
    return { profile_type: view };
  }

  /** Trellis runs no profile operations (reboot, rebuild, ...): the list is empty. */
  @Get(':type_name/ops')
  ops(@Ctx() req: ApiRequest, @Param('type_name') typeName: string) {
    requireVersion(req.version, '1.4');
    if (typeName !== PROFILE_TYPE_NOVA_SERVER) throw notFound('profile_type', typeName);
    return { operations: {} };
  }
}
