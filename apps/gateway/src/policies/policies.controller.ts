import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiTags } from '@nestjs/swagger';
import { Conflict, Created, ListQuery, NotFound, Ok, RequestBody, SenlinApi } from '../openapi/api-docs.decorators';
import { PolicyEnvelope, PolicyList, ValidatedPolicyEnvelope } from '../shared/views';
import { PolicyCreateBody, PolicyUpdateBody, PolicyValidateBody } from './policy.shapes';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { PoliciesService } from './policies.service';
import { Operation } from '../core/policy.guard';

@ApiTags('policies')
@SenlinApi()
@Controller('v1/policies')
export class PoliciesController {
  constructor(private readonly policies: PoliciesService) {}

  @Get()
  @Operation('policies:index')
  @Ok(PolicyList)
  @ListQuery({ filters: ['name', 'type'], sortKeys: ['type', 'name', 'created_at', 'updated_at'] })
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.policies.list(req, query);
  }

  @Post()
  @Operation('policies:create')
  @HttpCode(201)
  @RequestBody(PolicyCreateBody)
  @Created(PolicyEnvelope)
  @NotFound()
  create(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.policies.create(req, body);
  }

  @Post('validate')
  @Operation('policies:validate')
  @HttpCode(200)
  @RequestBody(PolicyValidateBody)
  @Ok(ValidatedPolicyEnvelope, 'The policy as if created, with id null and name validated_policy (>= 1.2).')
  validate(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.policies.validateOnly(req, body);
  }

  @Get(':policy_id')
  @Operation('policies:get')
  @Ok(PolicyEnvelope)
  @NotFound()
  get(@Ctx() req: ApiRequest, @Param('policy_id') id: string) {
    return this.policies.get(req, id);
  }

  @Patch(':policy_id')
  @Operation('policies:update')
  @RequestBody(PolicyUpdateBody)
  @Ok(PolicyEnvelope)
  @NotFound()
  update(@Ctx() req: ApiRequest, @Param('policy_id') id: string, @Body() body: unknown) {
    return this.policies.update(req, id, body);
  }

  @Delete(':policy_id')
  @Operation('policies:delete')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted.' })
  @NotFound()
  @Conflict('The policy is still attached to some clusters.')
  async remove(@Ctx() req: ApiRequest, @Param('policy_id') id: string): Promise<void> {
    await this.policies.remove(req, id);
  }
}
