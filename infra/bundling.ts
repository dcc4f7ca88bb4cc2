/**
 * How both Lambda functions are bundled and started. infra/stack.ts hands these
 * settings to NodejsFunction; bench/lambda.ts gives the same ones to esbuild
 * directly (loading the CDK stack would cost seconds), so the benchmark measures
 * the bundle that is deployed. Kept free of aws-cdk-lib for that reason.
 */
import type { BuildOptions } from 'esbuild';

/** esbuild's target for the functions' runtime (Runtime.NODEJS_24_X in the stack). */
export const LAMBDA_TARGET = 'node24';

/**
 * esbuild settings besides format (ESM) and target, in NodejsFunction's terms.
 *
 * The AWS SDK is bundled rather than left to the copy the runtime provides: one
 * minified file, tree-shaken to the clients and commands the handler uses, loads
 * in about a third of the time Node needs to resolve and compile the hundreds of
 * files of `@aws-sdk/*` and `@smithy/*` from node_modules (BENCHMARKS.md, "Lambda
 * size and init"). It also pins the SDK version to the lock file's.
 */
export const LAMBDA_BUNDLING: LambdaBundling = {
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  externalModules: [],
  // Bundled CommonJS dependencies that call require() need it in an ES module.
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
};

export interface LambdaBundling {
  minify: boolean;
  sourceMap: boolean;
  sourcesContent: boolean;
  mainFields: string[];
  /** Modules left out of the bundle, to be resolved at run time. */
  externalModules: string[];
  banner: string;
}

/** Stack traces through the bundle's source map (its cost at init is in the benchmark). */
export const LAMBDA_NODE_OPTIONS = '--enable-source-maps';

/**
 * The esbuild options NodejsFunction derives from these settings (bundle, platform
 * node, ESM, the target, and LAMBDA_BUNDLING), for building the same bundle
 * without CDK. `external` replaces the bundling's external modules.
 */
export function lambdaEsbuildOptions(external: string[] = LAMBDA_BUNDLING.externalModules): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: LAMBDA_TARGET,
    minify: LAMBDA_BUNDLING.minify,
    sourcemap: LAMBDA_BUNDLING.sourceMap,
    sourcesContent: LAMBDA_BUNDLING.sourcesContent,
    mainFields: LAMBDA_BUNDLING.mainFields,
    external,
    banner: { js: LAMBDA_BUNDLING.banner },
  };
}
