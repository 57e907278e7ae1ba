import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiTags } from '@nestjs/swagger';
import { Conflict, Created, ListQuery, NotFound, Ok, RequestBody, SenlinApi } from '../openapi/api-docs.decorators';
import { ProfileEnvelope, ProfileList, ValidatedProfileEnvelope } from '../shared/views';
import { ProfileCreateBody, ProfileUpdateBody, ProfileValidateBody } from './profile.shapes';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { ProfilesService } from './profiles.service';
import { Operation } from '../core/policy.guard';

@ApiTags('profiles')
@SenlinApi()
@Controller('v1/profiles')
export class ProfilesController {
  constructor(private readonly profiles: ProfilesService) {}

  @Get()
  @Operation('profiles:index')
  @Ok(ProfileList)
  @ListQuery({ filters: ['name', 'type'], sortKeys: ['type', 'name', 'created_at', 'updated_at'] })
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.profiles.list(req, query);
  }

  @Post()
  @Operation('profiles:create')
  @HttpCode(201)
  @RequestBody(ProfileCreateBody)
  @Created(ProfileEnvelope)
  create(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.profiles.create(req, body);
  }

  @Post('validate')
  @Operation('profiles:validate')
  @HttpCode(200)
  @RequestBody(ProfileValidateBody)
  @Ok(ValidatedProfileEnvelope, 'The profile as if created, with id null (>= 1.2).')
  validate(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.profiles.validate(req, body);
  }

  @Get(':profile_id')
  @Operation('profiles:get')
  @Ok(ProfileEnvelope)
  @NotFound()
  get(@Ctx() req: ApiRequest, @Param('profile_id') id: string) {
    return this.profiles.get(req, id);
  }

  @Patch(':profile_id')
  @Operation('profiles:update')
  @RequestBody(ProfileUpdateBody)
  @Ok(ProfileEnvelope)
  @NotFound()
  update(@Ctx() req: ApiRequest, @Param('profile_id') id: string, @Body() body: unknown) {
    return this.profiles.update(req, id, body);
  }

  @Delete(':profile_id')
  @Operation('profiles:delete')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted.' })
  @NotFound()
  @Conflict('The profile is still used by a cluster or node.')
  async remove(@Ctx() req: ApiRequest, @Param('profile_id') id: string): Promise<void> {
    await this.profiles.remove(req, id);
  }
}
