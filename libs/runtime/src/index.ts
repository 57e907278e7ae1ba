export * from './infrastructure';
