/**
 * The spec-schema helpers of libs/policies that the gateway reuses for profile specs, imported in
 * this one file.
 */
export {
  Schema,
  SchemaError,
  formatSpecVersion,
  pyRepr,
  pyStr,
  renderSchema,
  resolveSpec,
  type RenderedSchemaItem,
  type SchemaMap,
} from '@trellis/policies';
