export * from './definition';
export * from './errors';
export * from './event';
export * from './parse-definition';
export * from './results';
export * from './validate-definition';
export * from './stored-pipeline';
export * from './topics';
