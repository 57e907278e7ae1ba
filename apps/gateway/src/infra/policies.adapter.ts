/**
 * The policy framework (libs/policies) as the gateway uses it, imported in this one file.
 */
export { PolicyRegistry } from '@trellis/policies/framework/registry';
export {
  ADJUSTMENT_TYPES,
  CHANGE_IN_PERCENTAGE,
  checkResizeRequest,
  checkScaleRequest,
  checkSizeParams,
  type ClusterSizes,
} from '@trellis/policies/resize/resize';
