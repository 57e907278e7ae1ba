import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { notFound } from '@trellis/common';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { POLICY_REGISTRY } from '../core/tokens';
import { PolicyRegistry, describePolicyType, listPolicyTypes } from '../infra/policies.adapter';

@ApiTags('policy-types')
@Controller('v1/policy-types')
export class PolicyTypesController {
  constructor(@Inject(POLICY_REGISTRY) private readonly registry: PolicyRegistry) {}

  @Get()
  list(@Ctx() req: ApiRequest) {
    return listPolicyTypes(this.registry, { microversion14OrBelow: !req.version.atLeast('1.5') });
  }

  @Get(':type_name')
  show(@Ctx() req: ApiRequest, @Param('type_name') typeName: string) {
    if (!this.registry.has(typeName)) throw notFound('policy_type', typeName);
    return describePolicyType(this.registry, typeName, { supportStatus: req.version.atLeast('1.5') });
  }
}
