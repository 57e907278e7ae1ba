/**
 * The spec-schema helpers of libs/policies that the gateway reuses for profile specs, imported in
 * this one file.
 */
export { Schema, SchemaError, resolveSpec, type SchemaMap } from '@trellis/policies/schema/schema';
export { renderSchema, type RenderedSchemaItem } from '@trellis/policies/schema/render';
export { formatSpecVersion } from '@trellis/policies/schema/spec';
export { pyRepr, pyStr } from '@trellis/policies/schema/py-format';
