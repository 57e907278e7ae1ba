import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { FindingsService } from './findings.service';

@ApiTags('clusters')
@Controller('v1/clusters')
export class FindingsController {
  constructor(private readonly findings: FindingsService) {}

  /**
   * Where the cloud strays from the cluster's policies (issue 6), as the last drift check saw it:
   * open findings by default; `?status=RESOLVED` or `?status=all` for the history.
   */
  @Get(':cluster_id/findings')
  list(@Ctx() req: ApiRequest, @Param('cluster_id') id: string, @Query() query: Record<string, unknown>) {
    return this.findings.list(req, id, query);
  }
}
