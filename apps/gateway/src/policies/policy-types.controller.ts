import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { NotFound, Ok, SenlinApi } from '../openapi/api-docs.decorators';
import { PolicyTypeEnvelope, PolicyTypeList } from '../shared/type-views';
import { notFound } from '@trellis/common';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { POLICY_REGISTRY } from '../core/tokens';
import { PolicyRegistry, describePolicyType, listPolicyTypes } from '../infra/policies.adapter';
import { Operation } from '../core/policy.guard';

@ApiTags('policy-types')
@SenlinApi()
@Controller('v1/policy-types')
export class PolicyTypesController {
  constructor(@Inject(POLICY_REGISTRY) private readonly registry: PolicyRegistry) {}

  @Get()
  @Operation('policy_types:index')
  @Ok(PolicyTypeList)
  list(@Ctx() req: ApiRequest) {
    return listPolicyTypes(this.registry, { microversion14OrBelow: !req.version.atLeast('1.5') });
  }

  @Get(':type_name')
  @Operation('policy_types:get')
  @Ok(PolicyTypeEnvelope)
  @NotFound()
  show(@Ctx() req: ApiRequest, @Param('type_name') typeName: string) {
    if (!this.registry.has(typeName)) throw notFound('policy_type', typeName);
    return describePolicyType(this.registry, typeName, { supportStatus: req.version.atLeast('1.5') });
  }
}
