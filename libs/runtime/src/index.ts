export * from './infrastructure';
export * from './policy-plugins';
