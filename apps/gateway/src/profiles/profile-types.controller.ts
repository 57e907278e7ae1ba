import { Controller, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { NotFound, Ok, SenlinApi } from '../openapi/api-docs.decorators';
import { ProfileTypeEnvelope, ProfileTypeList, ProfileTypeOps } from '../shared/type-views';
import type { OutOf } from '../shapes/response';
import { requireVersion } from '../core/api-version';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { Operation } from '../core/policy.guard';
import { renderOperations, renderProfileSchema, typeNameOf } from './profile-type';
import { PROFILE_TYPES } from './profile-types';

@ApiTags('profile-types')
@SenlinApi()
@Controller('v1/profile-types')
export class ProfileTypesController {
  @Get()
  @Operation('profile_types:index')
  @Ok(ProfileTypeList)
  list(@Ctx() req: ApiRequest) {
    if (req.version.atLeast('1.5')) {
      return {
        profile_types: PROFILE_TYPES.all.map((t) => ({ name: t.name, version: t.version, support_status: t.supportStatus })),
      };
    }
    return { profile_types: PROFILE_TYPES.all.map((t) => ({ name: typeNameOf(t) })) };
  }

  @Get(':type_name')
  @Operation('profile_types:get')
  @Ok(ProfileTypeEnvelope)
  @NotFound()
  show(@Ctx() req: ApiRequest, @Param('type_name') typeName: string) {
    const type = PROFILE_TYPES.get(typeName);
    const view: OutOf<typeof ProfileTypeEnvelope>['profile_type'] = { name: typeNameOf(type), schema: renderProfileSchema(type) };
    if (req.version.atLeast('1.5')) view.support_status = type.supportStatus;
    return { profile_type: view };
  }

  /** The operations POST /v1/nodes/{id}/ops runs (Senlin's Profile.OPERATIONS of the type). */
  @Get(':type_name/ops')
  @Operation('profile_types:ops')
  @Ok(ProfileTypeOps, '>= 1.4.')
  @NotFound()
  ops(@Ctx() req: ApiRequest, @Param('type_name') typeName: string) {
    requireVersion(req.version, '1.4');
    return { operations: renderOperations(PROFILE_TYPES.get(typeName)) };
  }
}
