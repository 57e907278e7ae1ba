import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Conflict, ListQuery, NotFound, SenlinApi } from '../openapi/api-docs.decorators';
import { PolicyCreateRequest, PolicyUpdateRequest, PolicyValidateRequest } from '../openapi/request-bodies.dto';
import { PolicyEnvelope, PolicyList } from '../openapi/response-bodies.dto';
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
  @ApiOkResponse({ type: PolicyList })
  @ListQuery({ filters: ['name', 'type'], sortKeys: ['type', 'name', 'created_at', 'updated_at'] })
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.policies.list(req, query);
  }

  @Post()
  @Operation('policies:create')
  @HttpCode(201)
  @ApiBody({ type: PolicyCreateRequest })
  @ApiCreatedResponse({ type: PolicyEnvelope })
  @NotFound()
  create(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.policies.create(req, body);
  }

  @Post('validate')
  @Operation('policies:validate')
  @HttpCode(200)
  @ApiBody({ type: PolicyValidateRequest })
  @ApiOkResponse({ type: PolicyEnvelope, description: 'The policy as if created, with id null and name validated_policy (>= 1.2).' })
  validate(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.policies.validateOnly(req, body);
  }

  @Get(':policy_id')
  @Operation('policies:get')
  @ApiOkResponse({ type: PolicyEnvelope })
  @NotFound()
  get(@Ctx() req: ApiRequest, @Param('policy_id') id: string) {
    return this.policies.get(req, id);
  }

  @Patch(':policy_id')
  @Operation('policies:update')
  @ApiBody({ type: PolicyUpdateRequest })
  @ApiOkResponse({ type: PolicyEnvelope })
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
