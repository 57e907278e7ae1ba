import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { notFound } from '@trellis/common';
import { PublicRoute } from '../core/api.guard';
import type { HttpRequest, HttpResponse } from '../core/http.types';
import { loadUiAssets, setSecurityHeaders, type UiAsset } from './ui-assets';

/**
 * The web page for operators (README "The web page"): static files, no token needed to load them.
 * Everything it shows it reads from the clustering API with the signed-in person's token, so the
 * API's tenancy and policy rules apply to the page exactly as to any client.
 */
@ApiExcludeController()
@Controller('ui')
@PublicRoute()
export class UiController {
  private readonly assets = loadUiAssets();

  /** `/ui` → `/ui/`, so the page's relative links resolve under /ui (also behind a proxy's path prefix). */
  @Get()
  page(@Req() req: HttpRequest, @Res() res: HttpResponse): void {
    if (!req.path.endsWith('/')) {
      setSecurityHeaders(res);
      res.setHeader('Location', 'ui/');
      res.status(301).send();
      return;
    }
    this.send(req, res, 'index.html');
  }

  @Get(':file')
  file(@Req() req: HttpRequest, @Res() res: HttpResponse, @Param('file') file: string): void {
    this.send(req, res, file);
  }

  private send(req: HttpRequest, res: HttpResponse, name: string): void {
    setSecurityHeaders(res);
    const asset: UiAsset | undefined = this.assets.get(name);
    if (!asset) throw notFound('file', name);
    res.setHeader('Content-Type', asset.contentType);
    res.setHeader('ETag', asset.etag);
    // always revalidated: a new release is seen at the next load, an unchanged file costs a 304
    res.setHeader('Cache-Control', 'no-cache');
    if (req.headers['if-none-match'] === asset.etag) {
      res.status(304).send();
      return;
    }
    res.status(200).send(asset.body);
  }
}
