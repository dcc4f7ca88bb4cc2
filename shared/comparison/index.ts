/** The comparison model: observations in, a Comparison out (see docs/comparisons.md). */
export * from './answer.ts';
export * from './format.ts';
export * from './observations.ts';
export * from './setups.ts';
export * from './table.ts';
export { LEVEL, RESOLVE, type Interval, type Over } from './model.ts';
