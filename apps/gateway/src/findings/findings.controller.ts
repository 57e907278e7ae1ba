import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { NotFound, Ok, SenlinApi } from '../openapi/api-docs.decorators';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { FindingList, FindingsService } from './findings.service';
import { Operation } from '../core/policy.guard';

@ApiTags('clusters')
@SenlinApi()
@Controller('v1/clusters')
export class FindingsController {
  constructor(private readonly findings: FindingsService) {}

  /**
   * Where the cloud strays from the cluster's policies (issue 6), as the last drift check saw it:
   * open findings by default; `?status=RESOLVED` or `?status=all` for the history.
   */
  @Get(':cluster_id/findings')
  @Operation('clusters:findings')
  @Ok(FindingList)
  @ApiQuery({ name: 'status', required: false, enum: ['OPEN', 'RESOLVED', 'all'], description: 'Default OPEN.' })
  @NotFound()
  list(@Ctx() req: ApiRequest, @Param('cluster_id') id: string, @Query() query: Record<string, unknown>) {
    return this.findings.list(req, id, query);
  }
}
