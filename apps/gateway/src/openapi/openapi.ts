import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { MAX_API_VERSION } from '../core/api-version';
import { componentSchemas } from '../shapes/components';

/**
 * The OpenAPI document built from the controllers and the request and response shapes they name
 * (shapes/), with the browsable UI at /docs and the JSON at /docs-json (@nestjs/swagger 11 serves the
 * UI from swagger-ui-dist; no swagger-ui-express).
 */
export function setupOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Trellis clustering API')
    .setDescription(
      'Senlin-compatible clustering v1 API. Every /v1 request needs X-Auth-Token (a Keystone token); ' +
        `microversions 1.0-${MAX_API_VERSION} via "OpenStack-API-Version: clustering 1.x".`,
    )
    .setVersion(`1.0-${MAX_API_VERSION}`)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Auth-Token' }, 'keystone')
    .addSecurityRequirements('keystone')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...componentSchemas() } };
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
}
