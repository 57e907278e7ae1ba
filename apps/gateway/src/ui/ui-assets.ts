import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { HttpResponse } from '../core/http.types';

/** The web page's files: read once from `static/` beside this module (copied into dist by the build). */
export const UI_STATIC_DIR = join(__dirname, 'static');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

export interface UiAsset {
  body: Buffer;
  contentType: string;
  etag: string;
}

/**
 * The page and everything it loads, by file name: the folder is flat and read whole at start, so a
 * request can only ever name one of these files (no path is joined from the URL). Files of other
 * kinds (the type-check config) are not served.
 */
export function loadUiAssets(dir = UI_STATIC_DIR): Map<string, UiAsset> {
  const assets = new Map<string, UiAsset>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const contentType = CONTENT_TYPES[extname(entry.name)];
    if (!entry.isFile() || !contentType) continue;
    const body = readFileSync(join(dir, entry.name));
    assets.set(entry.name, { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
  }
  if (!assets.has('index.html')) throw new Error(`the web page's files are missing: no index.html in ${dir}`);
  return assets;
}

/**
 * What every answer under /ui carries: the page runs only its own scripts and styles and talks only
 * to this origin (CSP default-src 'self'), cannot be framed, and sends no Referer with the token page.
 */
const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

export function setSecurityHeaders(res: HttpResponse): void {
  for (const [name, value] of Object.entries(UI_SECURITY_HEADERS)) res.setHeader(name, value);
}
