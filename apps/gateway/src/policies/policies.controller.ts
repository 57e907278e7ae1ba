import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { PoliciesService } from './policies.service';

@ApiTags('policies')
@Controller('v1/policies')
export class PoliciesController {
  constructor(private readonly policies: PoliciesService) {}

  @Get()
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.policies.list(req, query);
  }

  @Post()
  @HttpCode(201)
  create(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.policies.create(req, body);
  }

  @Post('validate')
  @HttpCode(200)
  validate(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.policies.validateOnly(req, body);
  }

  @Get(':policy_id')
  get(@Ctx() req: ApiRequest, @Param('policy_id') id: string) {
    return this.policies.get(req, id);
  }

  @Patch(':policy_id')
  update(@Ctx() req: ApiRequest, @Param('policy_id') id: string, @Body() body: unknown) {
    return this.policies.update(req, id, body);
  }

  @Delete(':policy_id')
  @HttpCode(204)
  async remove(@Ctx() req: ApiRequest, @Param('policy_id') id: string): Promise<void> {
    await this.policies.remove(req, id);
  }
}
