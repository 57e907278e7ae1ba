import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { ProfilesService } from './profiles.service';

@ApiTags('profiles')
@Controller('v1/profiles')
export class ProfilesController {
  constructor(private readonly profiles: ProfilesService) {}

  @Get()
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.profiles.list(req, query);
  }

  @Post()
  @HttpCode(201)
  create(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.profiles.create(req, body);
  }

  @Post('validate')
  @HttpCode(200)
  validate(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.profiles.validate(req, body);
  }

  @Get(':profile_id')
  get(@Ctx() req: ApiRequest, @Param('profile_id') id: string) {
    return this.profiles.get(req, id);
  }

  @Patch(':profile_id')
  update(@Ctx() req: ApiRequest, @Param('profile_id') id: string, @Body() body: unknown) {
    return this.profiles.update(req, id, body);
  }

  @Delete(':profile_id')
  @HttpCode(204)
  async remove(@Ctx() req: ApiRequest, @Param('profile_id') id: string): Promise<void> {
    await this.profiles.remove(req, id);
  }
}
