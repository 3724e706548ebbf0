export { PipelineTestDriver } from './pipeline-test-driver';
export type { PipelineTestDriverOptions } from './pipeline-test-driver';
export { GraphTestDriver } from './graph-test-driver';
export { dailyRevenueDefinition, generateOrders, orderEvent, seededRandom } from './fixtures';
export type { GenerateOrdersOptions, OrderOptions } from './fixtures';
