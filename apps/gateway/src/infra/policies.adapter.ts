/**
 * The policy framework (libs/policies) as the gateway uses it, imported in this one file.
 */
export {
  ADJUSTMENT_TYPES,
  CHANGE_IN_PERCENTAGE,
  CloudFactMissingError,
  PolicyRegistry,
  PolicySpecError,
  checkResizeParams,
  checkResizeRequest,
  checkScaleRequest,
  checkSizeParams,
  describePolicyType,
  listPolicyTypes,
  specTypeName,
  validatePolicySpec,
  type CloudFacts,
  type ClusterSizes,
} from '@trellis/policies';
